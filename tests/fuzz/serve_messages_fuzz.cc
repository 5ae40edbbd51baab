// Fuzzes every serving wire message (serve/messages.h, the membership view and the rank report):
// the first byte picks the type, the rest is the message. A message that decodes (and
// validates) must re-encode to the same bytes.
#include "cluster/membership.h"
#include "fuzz_check.h"
#include "serve/messages.h"
#include "serve/rank_report.h"

using namespace mooncake;
using namespace mooncake::serve;

namespace {

template <typename M>
void Try(std::span<const std::byte> in) {
  fuzz::WireRoundTrip<M>(in, [](std::span<const std::byte> b, M* m) {
    auto decoded = M::Decode(b);
    if (!decoded.ok()) return false;
    *m = std::move(*decoded);
    return true;
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto in = fuzz::AsBytes(data + 1, size - 1);
  switch (data[0] % 11) {
    case 0:
      Try<PrefillTask>(in);
      break;
    case 1:
      Try<KvOffer>(in);
      break;
    case 2:
      Try<KvOfferReply>(in);
      break;
    case 3:
      Try<KvDone>(in);
      break;
    case 4:
      Try<PrefillDone>(in);
      break;
    case 5:
      Try<KvArrived>(in);
      break;
    case 6:
      Try<KvArrivedReply>(in);
      break;
    case 7:
      Try<DecodeDone>(in);
      break;
    case 8:
      Try<cluster::MembershipView>(in);
      break;
    case 10:
      Try<DecodeTokens>(in);
      break;
    default:
      Try<RankReport>(in);
      break;
  }
  return 0;
}
