#include "store/net/rereplicator.h"

#include <xxhash.h>

#include <algorithm>

#include "common/log.h"

namespace mooncake::store {

Rereplicator::Rereplicator(transport::Transport& transport, MasterService& master,
                           const StoreTopology& topology, Nanos timeout, size_t staging_bytes)
    : transport_(transport),
      master_(master),
      topology_(topology),
      timeout_(timeout),
      staging_(std::max<size_t>(staging_bytes, 4096)) {}

Rereplicator::~Rereplicator() {
  Stop();
  if (registered_) (void)transport_.UnregisterMemory(region_);
}

Status Rereplicator::Start() {
  auto region =
      transport_.RegisterMemory(staging_.data(), staging_.size(), transport::MemoryType::kHost);
  if (!region.ok()) return region.status().WithContext("re-replication staging buffer");
  region_ = *region;
  registered_ = true;
  worker_.Start(PeriodicThread::kOnlyWhenWoken, PeriodicThread::First::kWait,
                [this] { return CopyAll(); });
  return Status::Ok();
}

void Rereplicator::Kick() { worker_.Wake(); }

void Rereplicator::AddSegment(const StoreSegment& segment) {
  std::lock_guard<std::mutex> lock(topology_mu_);
  auto& segs = topology_.segments;
  auto at = std::lower_bound(segs.begin(), segs.end(), segment.rank,
                             [](const StoreSegment& s, Rank r) { return s.rank < r; });
  segs.insert(at, segment);  // ascending rank, as StoreTopology keeps them
}

void Rereplicator::Stop() { worker_.Stop(); }

bool Rereplicator::CopyAll() {
  while (!worker_.stopping()) {
    const Nanos ordered = clock_.Now();  // before the master starts the copies' deadlines
    auto orders = master_.WithMaster([](MetadataMaster& m) { return m.StartCopies(64); });
    for (const CopyOrder& order : orders) {
      Status s = Copy(order, ordered + order.timeout);
      if (!s.ok()) {
        ++failed_;
        log::Warn("re-replication of '{}' to rank {}: {}", order.key, order.to.rank.value,
                  s.ToString());
      } else {
        ++copied_;
      }
      Status done = master_.WithMaster(
          [&](MetadataMaster& m) { return m.CompleteCopy(order.ticket, s.ok()); });
      if (!done.ok()) log::Warn("re-replication of '{}': {}", order.key, done.ToString());
    }
    if (orders.empty()) break;
  }
  return true;
}

Status Rereplicator::Move(transport::OpKind op, Rank peer, uint64_t remote, size_t length,
                          Nanos deadline) {
  // Past the order's deadline the master may hand the source and the target to others.
  const Nanos left = std::min(timeout_, deadline - clock_.Now());
  if (left <= Nanos(0)) return Timeout("the copy's deadline passed");
  transport::TransferRequest req{op, staging_.data(), peer, remote, length};
  auto batch = transport_.Submit(std::span(&req, 1));
  if (!batch.ok()) return batch.status();
  return (*batch)->Wait(left);
}

Status Rereplicator::Copy(const CopyOrder& order, Nanos deadline) {
  Result<uint64_t> from = Internal("unset"), to = Internal("unset");
  {
    std::lock_guard<std::mutex> lock(topology_mu_);
    from = topology_.RemoteAddress(order.from);
    to = topology_.RemoteAddress(order.to);
  }
  if (!from.ok()) return from.status();
  if (!to.ok()) return to.status();
  // Piece by piece through the staging buffer, hashing what was read: only bytes that match the
  // object's checksum become a replica (a damaged or torn survivor is never copied).
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) return Internal("out of memory for a hash state");
  XXH3_64bits_reset(state);
  Status s = Status::Ok();
  for (uint64_t done = 0; done < order.from.length && s.ok();) {
    const size_t piece = std::min<uint64_t>(staging_.size(), order.from.length - done);
    s = Move(transport::OpKind::kRead, order.from.rank, *from + done, piece, deadline);
    if (s.ok()) XXH3_64bits_update(state, staging_.data(), piece);
    if (s.ok()) s = Move(transport::OpKind::kWrite, order.to.rank, *to + done, piece, deadline);
    done += piece;
  }
  const uint64_t sum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (s.ok() && sum != order.checksum) return Corrupt("the surviving replica fails its checksum");
  return s;
}

}  // namespace mooncake::store
