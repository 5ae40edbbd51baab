#include "store/ssd/ssd_coordinator.h"

#include "common/log.h"
#include "common/threads.h"
#include "common/units.h"

namespace mooncake::store {

SpillCoordinator::SpillCoordinator(transport::Rpc& rpc, MasterService& service,
                                   SpillCoordinatorConfig cfg)
    : rpc_(rpc), service_(service), cfg_(cfg) {}

SpillCoordinator::~SpillCoordinator() { Stop(); }

void SpillCoordinator::Start() {
  transport::CheckRegistered(
      rpc_.Register(SsdMsg::kSsdDrop, [this](Rank from, std::span<const std::byte> req,
                                             transport::Responder) { OnDrop(from, req); }));
  service_.SetTombstoneWriter(
      [this](const std::vector<TombstoneOrder>& orders) { return WriteTombstones(orders); });
  service_.SetEvictionSink(this);
  if (!sender_.joinable()) sender_ = std::thread([this] { SenderLoop(); });
}

void SpillCoordinator::Stop() {
  service_.SetEvictionSink(nullptr);  // no new jobs after this returns
  service_.SetTombstoneWriter(nullptr);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (sender_.joinable()) sender_.join();
  std::vector<std::thread> writers;
  {
    std::lock_guard<std::mutex> lock(recovery_mu_);
    writers.swap(recovery_tombstones_);
  }
  for (auto& t : writers) t.join();
}

bool SpillCoordinator::OnEvict(const EvictedReplica& replica) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t& pending = pending_bytes_[replica.location.rank];
  auto failed = failed_.find(replica.location.rank);
  const bool backing_off = failed != failed_.end() && failed->second.until > clock_.Now();
  if (stopping_ || backing_off || pending + replica.size > cfg_.max_pending_bytes) {
    ++stats_.refused_at_conductor;
    return false;
  }
  pending += replica.size;
  Job j;
  j.spill = replica;
  queues_[replica.location.rank].push_back(std::move(j));
  cv_.notify_one();
  return true;
}

std::string SpillCoordinator::WhyDeclined(Rank rank) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return "spilling has stopped";
  auto failed = failed_.find(rank);
  if (failed != failed_.end() && failed->second.until > clock_.Now()) {
    return "the last spill to store rank " + std::to_string(rank.value) +
           " failed: " + failed->second.why;
  }
  auto pending = pending_bytes_.find(rank);
  return "the spill queue of store rank " + std::to_string(rank.value) + " is full (" +
         std::to_string(pending == pending_bytes_.end() ? 0 : pending->second) + " of " +
         std::to_string(cfg_.max_pending_bytes) + " B pending, store.spill_queue)";
}

bool SpillCoordinator::OnPromote(const PromotionOrder& order) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) return false;
  Job j;
  j.promote = true;
  j.order = order;
  queues_[order.ssd.rank].push_back(std::move(j));
  cv_.notify_one();
  return true;
}

void SpillCoordinator::SenderLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] {
      if (stopping_) return true;
      for (auto& [r, q] : queues_) {
        if (!q.empty()) return true;
      }
      return false;
    });
    bool any = false;
    for (auto& [rank, q] : queues_) {
      if (q.empty()) continue;
      any = true;
      std::vector<EvictedReplica> spills;
      std::vector<PromotionOrder> promotions;
      while (!q.empty() && spills.size() + promotions.size() < cfg_.batch) {
        Job& j = q.front();
        if (j.promote) {
          promotions.push_back(std::move(j.order));
        } else {
          spills.push_back(std::move(j.spill));
        }
        q.pop_front();
      }
      const Rank r = rank;
      in_flight_ += spills.size() + promotions.size();
      lock.unlock();
      // On stop, what is queued is completed as dropped (frees the DRAM) without an RPC.
      if (!promotions.empty()) SendPromotions(r, std::move(promotions));
      if (!spills.empty()) SendSpills(r, std::move(spills));
      lock.lock();
      cv_.notify_all();
      break;  // re-scan: queues_ may have changed
    }
    if (!any && stopping_) break;
  }
}

void SpillCoordinator::SendSpills(Rank rank, std::vector<EvictedReplica> batch) {
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping = stopping_;
    stats_.spills_sent += stopping ? 0 : batch.size();
  }
  SpillResponse resp;
  Status s = stopping ? Status(ErrorCode::kBusy, "stopping") : Status::Ok();
  if (s.ok()) {
    SpillRequest req;
    for (const auto& e : batch) {
      req.entries.push_back(
          SpillEntry{e.ticket, e.key, e.version, e.location.offset, e.location.length, e.checksum});
    }
    auto reply = rpc_.Call(rank, SsdMsg::kSpill, Encode(req), cfg_.rpc_timeout);
    s = reply.ok() ? Decode(*reply, &resp) : reply.status();
    if (s.ok() && resp.entries.size() != batch.size()) s = ProtocolError("spill answer length");
    if (!s.ok())
      log::Warn("spill of {} blocks to rank {}: {}", batch.size(), rank.value, s.ToString());
  }
  SpillCoordinatorStats add;
  std::vector<std::string> recorded;
  Status failure;  // the first failure of the rank's tier or disk: the rank backs off
  service_.WithMaster([&](MetadataMaster& m) {
    for (size_t i = 0; i < batch.size(); ++i) {
      std::optional<ReplicaLocation> ssd;
      Status e = s.ok() ? FromEntry(resp.entries[i].status) : s;
      if (e.ok()) {
        ssd = ReplicaLocation{rank, Tier::kSsd, resp.entries[i].location, batch[i].size};
      } else if (e.code() == ErrorCode::kBusy) {
        ++add.refused_by_tier;
      } else {
        ++add.spill_failures;
        // A block the tier cannot take (a key it cannot hold) says nothing about the others.
        const bool whole_rank = e.code() != ErrorCode::kInvalidArgument;
        if (failure.ok() && !stopping && whole_rank) failure = e;
      }
      Status c = m.CompleteSpill(batch[i].ticket, ssd);
      if (ssd && c.ok()) {
        ++add.spilled;
        recorded.push_back(batch[i].key);
      }
    }
    return 0;
  });
  if (!failure.ok()) {
    log::Warn(
        "spills to store rank {} fail ({} of {} blocks): {}; its blocks stay in DRAM "
        "or are dropped as store.when_full says, next try in {}",
        rank.value, add.spill_failures, batch.size(), failure.ToString(),
        FormatDuration(cfg_.retry_after));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!failure.ok()) failed_[rank] = Failure{clock_.Now() + cfg_.retry_after, failure.ToString()};
  for (const auto& e : batch) pending_bytes_[rank] -= e.size;
  in_flight_ -= batch.size();
  stats_.spilled += add.spilled;
  stats_.refused_by_tier += add.refused_by_tier;
  stats_.spill_failures += add.spill_failures;
  if (on_spill_recorded) {
    for (const auto& k : recorded) on_spill_recorded(k);
  }
}

void SpillCoordinator::SendPromotions(Rank rank, std::vector<PromotionOrder> batch) {
  bool stopping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping = stopping_;
  }
  StatusResponse resp;
  Status s = stopping ? Status(ErrorCode::kBusy, "stopping") : Status::Ok();
  if (s.ok()) {
    PromoteRequest req;
    for (const auto& o : batch) req.entries.push_back({o.key, o.version, o.dram.offset, o.size});
    auto reply = rpc_.Call(rank, SsdMsg::kPromote, Encode(req), cfg_.rpc_timeout);
    s = reply.ok() ? Decode(*reply, &resp) : reply.status();
    if (s.ok() && resp.entries.size() != batch.size()) s = ProtocolError("promote answer length");
  }
  uint64_t ok_count = 0;
  service_.WithMaster([&](MetadataMaster& m) {
    for (size_t i = 0; i < batch.size(); ++i) {
      bool ok = s.ok() && resp.entries[i].code == ErrorCode::kOk;
      if (m.CompletePromote(batch[i].ticket, ok).ok() && ok) ++ok_count;
    }
    return 0;
  });
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_ -= batch.size();
  stats_.promotions += ok_count;
  stats_.promotion_failures += batch.size() - ok_count;
}

std::vector<Status> SpillCoordinator::WriteTombstones(const std::vector<TombstoneOrder>& orders) {
  std::vector<Status> out(orders.size());
  std::map<Rank, std::vector<size_t>> by_rank;
  for (size_t i = 0; i < orders.size(); ++i) by_rank[orders[i].rank].push_back(i);
  for (const auto& [rank, which] : by_rank) {
    SsdTombstoneRequest req;
    for (size_t i : which) req.entries.push_back(SsdTombstone{orders[i].key, orders[i].version});
    auto reply = rpc_.Call(rank, SsdMsg::kSsdTombstone, Encode(req), cfg_.rpc_timeout);
    StatusResponse resp;
    Status s = reply.ok() ? Decode(*reply, &resp) : reply.status();
    if (s.ok() && resp.entries.size() != which.size()) s = ProtocolError("tombstone answer length");
    for (size_t j = 0; j < which.size(); ++j) {
      out[which[j]] = (s.ok() ? FromEntry(resp.entries[j]) : s)
                          .WithContext("tombstone on store rank " + std::to_string(rank.value));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const Status& s : out) (s.ok() ? stats_.tombstones : stats_.tombstone_failures)++;
  return out;
}

void SpillCoordinator::OnDrop(Rank from, std::span<const std::byte> request) {
  SsdDropNotice n;
  if (!Decode(request, &n).ok()) return;
  uint64_t applied = 0;
  service_.WithMaster([&](MetadataMaster& m) {
    for (const auto& b : n.blocks) {
      applied +=
          m.DropReplica(b.key, ReplicaLocation{from, Tier::kSsd, b.location, b.size}, b.version)
              .ok();
    }
    return 0;
  });
  std::lock_guard<std::mutex> lock(mu_);
  stats_.dropped_by_tier_lru += applied;
}

void SpillCoordinator::AddRecovered(Rank rank, const RecoveredBlocks& blocks) {
  uint64_t ok = 0, rejected = 0;
  std::vector<TombstoneOrder> losers;  // versions another rank recovered higher
  service_.WithMaster([&](MetadataMaster& m) {
    m.SeedVersion(blocks.max_version + 1);  // new puts outrank every version on disk
    for (const auto& b : blocks.blocks) {
      Status s = m.AddReplica(b.key, b.size, b.checksum,
                              ReplicaLocation{rank, Tier::kSsd, b.location, b.size}, b.version);
      (s.ok() ? ok : rejected)++;
    }
    losers = m.TakeTombstones();
    return 0;
  });
  // Written from a thread of their own: the store ranks serve them once the job runs, and the
  // conductor must not wait on them inside the recovery gather.
  if (!losers.empty()) {
    std::lock_guard<std::mutex> lock(recovery_mu_);
    recovery_tombstones_.emplace_back([this, losers = std::move(losers)] {
      for (const Status& s : WriteTombstones(losers)) {
        if (!s.ok()) log::Warn("tombstone of a superseded recovered block: {}", s.ToString());
      }
    });
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.recovered += ok;
  stats_.recovery_rejected += rejected;
}

bool SpillCoordinator::WaitIdle(Nanos timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] {
    if (in_flight_ != 0) return false;
    for (auto& [r, q] : queues_) {
      if (!q.empty()) return false;
    }
    return true;
  });
}

SpillCoordinatorStats SpillCoordinator::Stats() const { return CopyLocked(mu_, stats_); }

}  // namespace mooncake::store
