// Fuzzes the remote descriptor decoder (transport/remote_descriptor.cc), which reads what every
// peer publishes in the bootstrap exchange. A descriptor that decodes must re-encode to the same
// bytes.
#include "fuzz_check.h"
#include "transport/transport.h"

using namespace mooncake;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto in = fuzz::AsBytes(data, size);
  auto d = transport::RemoteDescriptor::Decode(in);
  if (!d.ok()) return 0;
  MC_FUZZ_CHECK(d->type == transport::MemoryType::kHost || d->type == transport::MemoryType::kCuda,
                "memory type");
  MC_FUZZ_CHECK(fuzz::SameBytes(d->Encode(), in), "remote descriptor round trip");
  return 0;
}
