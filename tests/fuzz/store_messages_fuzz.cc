// Fuzzes every store wire message (store/net/messages.h): the first byte picks the type, the
// rest is the message. A message that decodes (and validates) must re-encode to the same bytes.
#include "fuzz_check.h"
#include "store/net/messages.h"

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
  switch (data[0] % 9) {
    case 0:
      Try<PutStartRequest>(in);
      break;
    case 1:
      Try<PutEndRequest>(in);
      break;
    case 2:
      Try<KeysRequest>(in);
      break;
    case 3:
      Try<StatusResponse>(in);
      break;
    case 4:
      Try<PutStartResponse>(in);
      break;
    case 5:
      Try<GetResponse>(in);
      break;
    case 6:
      Try<ExistsResponse>(in);
      break;
    case 7:
      Try<StatsResponse>(in);
      break;
    default:
      Try<SuspectRanksRequest>(in);
      break;
  }
  return 0;
}
