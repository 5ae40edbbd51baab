// Fuzzes every SSD-tier wire message (store/net/ssd_messages.h): the first byte picks the type,
// the rest is the message. A message that decodes (and validates) must re-encode to the same
// bytes.
#include "fuzz_check.h"
#include "store/net/ssd_messages.h"

using namespace mooncake;
using namespace mooncake::store;

namespace {

template <typename M>
void Try(std::span<const std::byte> in) {
  fuzz::WireRoundTrip<M>(in, [](std::span<const std::byte> b, M* m) { return Decode(b, m).ok(); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto in = fuzz::AsBytes(data + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      Try<SpillRequest>(in);
      break;
    case 1:
      Try<SpillResponse>(in);
      break;
    case 2:
      Try<PromoteRequest>(in);
      break;
    case 3:
      Try<SsdReadResponse>(in);
      break;
    case 4:
      Try<SsdDropNotice>(in);
      break;
    default:
      Try<RecoveredBlocks>(in);
      break;
  }
  return 0;
}
