// Fuzzes the P2P wire messages (p2p/messages.h, the manifest) and the store directory a client
// reads from the master (store/net/directory.h): the first byte picks the type, the rest is the
// message. A message that decodes and validates must re-encode to the same bytes; a directory
// that decodes must also yield its topology or a clean error.
#include "fuzz_check.h"
#include "p2p/manifest.h"
#include "p2p/messages.h"
#include "store/net/directory.h"

using namespace mooncake;

namespace {

template <typename M>
void Try(std::span<const std::byte> in, const char* name) {
  auto decoded = WireDecode<M>(in, name);
  if (!decoded.ok()) return;
  std::vector<std::byte> again = WireEncode(*decoded);
  MC_FUZZ_CHECK(fuzz::SameBytes(again, in), name);
}

void TryDirectory(std::span<const std::byte> in) {
  auto decoded = store::StoreDirectory::Decode(in);
  if (!decoded.ok()) return;
  MC_FUZZ_CHECK(fuzz::SameBytes(decoded->Encode(), in), "StoreDirectory");
  (void)decoded->Topology();  // every segment descriptor decoded: must fail cleanly, not crash
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto in = fuzz::AsBytes(data + 1, size - 1);
  switch (data[0] % 11) {
    case 0:
      Try<p2p::RegisterRequest>(in, "p2p RegisterRequest");
      break;
    case 1:
      Try<p2p::NameRequest>(in, "p2p NameRequest");
      break;
    case 2:
      Try<p2p::JoinRequest>(in, "p2p JoinRequest");
      break;
    case 3:
      Try<p2p::UpdateRequest>(in, "p2p UpdateRequest");
      break;
    case 4:
      Try<p2p::UpdateResponse>(in, "p2p UpdateResponse");
      break;
    case 5:
      Try<p2p::RankReport>(in, "p2p RankReport");
      break;
    case 6:
      Try<p2p::HeartbeatResponse>(in, "p2p HeartbeatResponse");
      break;
    case 7:
      Try<p2p::ListResponse>(in, "p2p ListResponse");
      break;
    case 8: {
      auto m = p2p::DecodeManifest(in);
      if (m.ok()) MC_FUZZ_CHECK(fuzz::SameBytes(p2p::EncodeManifest(*m), in), "P2P manifest");
      break;
    }
    default:
      TryDirectory(in);
      break;
  }
  return 0;
}
