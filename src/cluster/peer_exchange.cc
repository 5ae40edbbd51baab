#include "cluster/peer_exchange.h"

#include <fmt/format.h>

#include "common/replace_file.h"
#include "common/wire.h"

namespace mooncake::cluster {
namespace {
constexpr uint32_t kRecordMagic = 0x4d434250;  // "MCBP"
constexpr uint32_t kMaxRegions = 4096;
}  // namespace

std::vector<std::byte> EncodePeerRecord(const PeerInfo& info, std::span<const std::byte> address) {
  WireWriter w;
  w.Put<uint32_t>(kRecordMagic);
  w.Put<uint8_t>(static_cast<uint8_t>(info.role));
  w.PutString(info.host);
  w.Put<uint64_t>(info.token.hi);
  w.Put<uint64_t>(info.token.lo);
  w.PutBytes(address);
  w.Put<uint32_t>(static_cast<uint32_t>(info.regions.size()));
  for (const auto& r : info.regions) w.PutBytes(r.Encode());
  return w.Take();
}

Result<PeerInfo> DecodePeerRecord(std::span<const std::byte> bytes,
                                  std::vector<std::byte>* address) {
  WireReader r(bytes);
  uint32_t magic = 0, regions = 0;
  uint8_t role = 0;
  PeerInfo info;
  std::span<const std::byte> addr;
  r.Get(&magic);
  r.Get(&role);
  r.GetString(&info.host, 4096);
  r.Get(&info.token.hi);
  r.Get(&info.token.lo);
  r.GetBytes(&addr, 1 << 20);
  r.Get(&regions);
  if (!r.ok() || magic != kRecordMagic || role > 3 || regions > kMaxRegions) {
    return ProtocolError("malformed bootstrap record");
  }
  info.role = static_cast<Role>(role);
  for (uint32_t i = 0; i < regions; ++i) {
    std::span<const std::byte> enc;
    if (!r.GetBytes(&enc, 1 << 20))
      return ProtocolError("bootstrap record truncated in region " + std::to_string(i));
    auto d = transport::RemoteDescriptor::Decode(enc);
    if (!d.ok()) return d.status();
    info.regions.push_back(std::move(*d));
  }
  if (!r.done()) return ProtocolError("bootstrap record has trailing bytes");
  address->assign(addr.begin(), addr.end());
  return info;
}

namespace {

// Written beside and renamed, so a reader polling for the file never sees half of it.
Status WriteAddressFile(const std::string& path, const std::vector<std::vector<std::byte>>& all) {
  std::string text;
  for (const auto& address : all) {
    for (std::byte b : address) text += fmt::format("{:02x}", static_cast<unsigned>(b));
    text += "\n";
  }
  const Status written = ReplaceFile(path, text);
  if (!written.ok()) return IoError("the address file: " + written.message());
  return Status::Ok();
}

// The rank whose record says it conducts; rank 0 in a tool where none does.
size_t ConductorOf(const std::vector<PeerInfo>& peers) {
  for (size_t r = 0; r < peers.size(); ++r) {
    if (peers[r].role == Role::kConductor) return r;
  }
  return 0;
}

}  // namespace

Result<std::vector<PeerInfo>> ExchangePeers(const Bootstrap& bootstrap, transport::Transport& t,
                                            transport::Rpc* rpc, Role my_role,
                                            const std::vector<transport::MemoryRegion>& exported,
                                            Nanos timeout, const std::string& address_file) {
  PeerInfo mine;
  mine.role = my_role;
  mine.host = bootstrap.hostname();
  // The conductor draws the job's token (in a tool where no rank conducts, rank 0 does).
  if (my_role == Role::kConductor || bootstrap.rank() == 0) mine.token = transport::DrawJobToken();
  for (const auto& region : exported) {
    auto d = t.Export(region);
    if (!d.ok()) return d.status();
    mine.regions.push_back(std::move(*d));
  }
  auto gathered =
      bootstrap.AllGather(EncodePeerRecord(mine, t.LocalAddress()), "bootstrap exchange", timeout);
  if (!gathered.ok()) return gathered.status();
  const auto& all = *gathered;
  std::vector<PeerInfo> peers(all.size());
  std::vector<std::vector<std::byte>> addresses(all.size());
  for (size_t r = 0; r < all.size(); ++r) {
    auto info = DecodePeerRecord(all[r], &addresses[r]);
    if (!info.ok())
      return info.status().WithContext("bootstrap record of rank " + std::to_string(r));
    peers[r] = std::move(*info);
  }
  const size_t conductor = ConductorOf(peers);
  if (rpc != nullptr) rpc->SetJobToken(peers[conductor].token);
  MC_RETURN_IF_ERROR(t.ConnectAll(addresses));
  if (static_cast<size_t>(bootstrap.rank()) == conductor && !address_file.empty()) {
    MC_RETURN_IF_ERROR(WriteAddressFile(address_file, addresses));
  }
  for (size_t r = 0; r < peers.size(); ++r) {
    for (const auto& d : peers[r].regions) {
      MC_RETURN_IF_ERROR(t.Import(Rank{static_cast<int32_t>(r)}, d));
    }
  }
  return peers;
}

}  // namespace mooncake::cluster
