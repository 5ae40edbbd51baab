// Fuzzes the bootstrap record decoder (cluster/peer_exchange.h DecodePeerRecord): what every rank
// reads of every other rank at start (role, host, worker address, remote descriptors). A record
// that decodes must re-encode to the same bytes.
#include "cluster/peer_exchange.h"
#include "fuzz_check.h"

using namespace mooncake;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto in = fuzz::AsBytes(data, size);
  std::vector<std::byte> address;
  auto info = cluster::DecodePeerRecord(in, &address);
  if (!info.ok()) return 0;
  MC_FUZZ_CHECK(fuzz::SameBytes(cluster::EncodePeerRecord(*info, address), in),
                "bootstrap record round trip");
  return 0;
}
