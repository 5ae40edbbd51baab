#include "p2p/p2p_node.h"

#include <fmt/format.h>

#include <thread>

#include "common/log.h"

namespace mooncake::p2p {

P2pNode::P2pNode(P2pConfig config, transport::Transport& transport, TrackerClient& tracker)
    : config_(std::move(config)), transport_(transport), tracker_(tracker) {}

P2pNode::~P2pNode() = default;

Result<Manifest> P2pNode::PrepareSource(const std::string& name,
                                        const std::vector<SourceFile>& files, bool in_memory,
                                        bool writable_private,
                                        std::unique_ptr<LocalObject>* copy) const {
  Manifest m;
  m.name = name;
  m.piece_size = config_.piece_size;
  for (const auto& f : files) m.entries.push_back(f.entry);
  if (in_memory) {
    auto o = LocalObject::LoadSourceMemory(files, m.piece_size, &transport_, &m.checksums);
    if (!o.ok()) return o.status();
    *copy = std::move(*o);
  } else {
    auto o = LocalObject::OpenSourceFiles(files, &transport_, writable_private);
    if (!o.ok()) return o.status();
    m.checksums = HashPieces(**o, m.piece_size, config_.hash_threads);
    *copy = std::move(*o);
  }
  MC_RETURN_IF_ERROR(m.Validate());
  return m;
}

Result<HolderCopy> P2pNode::DescribeCopy(const LocalObject& copy) const {
  HolderCopy h;
  h.rank = transport_.self().value;
  h.entry_addrs = copy.EntryAddresses();
  auto descriptors = copy.ExportDescriptors();
  if (!descriptors.ok()) return descriptors.status();
  h.descriptors = std::move(*descriptors);
  return h;
}

Status P2pNode::Register(const Manifest& manifest, std::unique_ptr<LocalObject> copy) {
  MC_RETURN_IF_ERROR(manifest.Validate());
  if (held_.count(manifest.name)) {
    return InvalidArgument(fmt::format("this rank holds '{}' already", manifest.name));
  }
  auto described = DescribeCopy(*copy);
  if (!described.ok()) return described.status();
  described->complete = true;
  MC_RETURN_IF_ERROR(tracker_.Register(RegisterRequest{manifest, *described}));
  held_[manifest.name] = HeldObject{manifest, std::move(copy)};
  return Status::Ok();
}

Result<Manifest> P2pNode::LookupWithRetry(const std::string& name,
                                          const std::atomic<bool>* cancel) {
  SteadyClock clock;
  const Nanos deadline = clock.Now() + config_.lookup_timeout;
  for (;;) {
    auto m = tracker_.Lookup(name);
    if (m.ok() || m.status().code() != ErrorCode::kNotFound || clock.Now() > deadline) return m;
    if (cancel != nullptr && cancel->load()) return m.status().WithContext("lookup abandoned");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Result<FetchStats> P2pNode::Fetch(const std::string& name, const FetchTarget& target,
                                  const FetchOptions& options) {
  if (held_.count(name)) return InvalidArgument(fmt::format("this rank holds '{}' already", name));
  auto manifest = LookupWithRetry(name, options.cancel);
  if (!manifest.ok()) return manifest.status();
  auto copy = target.kind == FetchTarget::Kind::kFiles
                  ? LocalObject::CreateFiles(*manifest, target.dir, &transport_)
                  : LocalObject::CreateMemory(*manifest, &transport_);
  if (!copy.ok()) return copy.status();
  auto described = DescribeCopy(**copy);
  if (!described.ok()) return described.status();
  MC_RETURN_IF_ERROR(tracker_.Join(JoinRequest{name, *described}));
  auto& held = held_[name] = HeldObject{std::move(*manifest), std::move(*copy)};
  Fetcher fetcher(config_.fetch, transport_, tracker_, held.manifest, *held.copy, options);
  auto stats = fetcher.Run();
  if (!stats.ok()) {
    (void)tracker_.Unregister(name);
    abandoned_.push_back(std::move(held.copy));
    held_.erase(name);
  }
  return stats;
}

Status P2pNode::Unregister(const std::string& name) {
  auto it = held_.find(name);
  if (it == held_.end()) return NotFound(fmt::format("this rank holds no '{}'", name));
  Status s = tracker_.Unregister(name);
  held_.erase(it);
  return s;
}

void P2pNode::TransportClosed() {
  for (auto& [name, held] : held_) held.copy->TransportClosed();
  for (auto& copy : abandoned_) copy->TransportClosed();
}

LocalObject* P2pNode::Held(const std::string& name) {
  auto it = held_.find(name);
  return it == held_.end() ? nullptr : it->second.copy.get();
}

const Manifest* P2pNode::HeldManifest(const std::string& name) const {
  auto it = held_.find(name);
  return it == held_.end() ? nullptr : &it->second.manifest;
}

}  // namespace mooncake::p2p
