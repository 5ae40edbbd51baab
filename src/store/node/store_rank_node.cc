#include "store/node/store_rank_node.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/log.h"
#include "store/net/messages.h"

namespace mooncake::store {

StoreRankNode::StoreRankNode(StoreRankConfig cfg, Rank self, Rank master,
                             transport::Transport& transport, transport::Rpc& rpc,
                             std::span<std::byte> segment)
    : cfg_(std::move(cfg)),
      self_(self),
      master_(master),
      transport_(transport),
      rpc_(rpc),
      segment_(segment) {}

StoreRankNode::~StoreRankNode() = default;

hdf5::Hdf5TierOptions StoreRankNode::TierOptions() {
  hdf5::Hdf5TierOptions t;
  t.dir = cfg_.ssd_dir;
  t.capacity = cfg_.ssd_capacity;
  // Four buckets at least, so the tier's LRU (whole buckets) never drops most of it at once.
  t.bucket_bytes =
      std::clamp<uint64_t>(cfg_.ssd_capacity / 4 / (1 << 20) * (1 << 20), 16 << 20, 256 << 20);
  t.queue_bytes = cfg_.spill_queue;
  t.evict_lru = !cfg_.keep_when_full;
  t.cluster_id = "mooncake";
  t.model_preset = cfg_.model_preset;
  t.kv_layout = cfg_.kv_layout;
  t.store_rank = self_.value;
  t.on_drop_block = [this](const hdf5::SsdBlock& b) {
    if (service_) service_->OnTierDrop(b);
  };
  return t;
}

Status StoreRankNode::Start() {
  if (!cfg_.ssd) return Status::Ok();
  auto tier = hdf5::Hdf5Tier::Open(TierOptions(), &recovery_);
  if (!tier.ok()) return tier.status().WithContext("SSD tier in " + cfg_.ssd_dir);
  tier_ = std::move(*tier);
  LogRecovery(cfg_.ssd_dir);
  // Remote SSD reads land in a staging region registered with the transport (kSsdStage).
  SsdStoreServiceConfig sc;
  sc.transport = &transport_;
  service_ = std::make_unique<SsdStoreService>(rpc_, *tier_, segment_, master_, sc);
  service_->Start();
  return Status::Ok();
}

void StoreRankNode::LogRecovery(const std::string& dir) const {
  if (recovery_.files > 0) {
    log::Info("SSD tier {}: {} blocks recovered, {} dropped, {} files ({} unreadable)", dir,
              recovery_.recovered, recovery_.dropped, recovery_.files, recovery_.unreadable_files);
  }
  // Everything recovery dropped, file by file with the reason, at the default log level.
  for (const std::string& note : recovery_.file_notes) {
    log::Warn("SSD recovery on rank {}: {}", self_.value, note);
  }
}

RecoveredBlocks StoreRankNode::Recovered() const {
  return tier_ ? ToRecoveredBlocks(recovery_) : RecoveredBlocks{};
}

std::vector<RecoveredBlocks> SplitRecovered(RecoveredBlocks all, size_t max_part_bytes) {
  std::vector<RecoveredBlocks> parts;
  RecoveredBlocks part = all;  // the first part carries the counters
  part.blocks.clear();
  size_t bytes = 0;
  for (auto& b : all.blocks) {
    const size_t cost = sizeof(uint32_t) + b.key.size() + 4 * sizeof(uint64_t);
    if (!part.blocks.empty() && bytes + cost > max_part_bytes) {
      parts.push_back(std::move(part));
      part = RecoveredBlocks{};
      part.max_version = all.max_version;  // every part keeps new versions above the disk's
      bytes = 0;
    }
    part.blocks.push_back(std::move(b));
    bytes += cost;
  }
  parts.push_back(std::move(part));
  return parts;
}

Status StoreRankNode::ReportRecovered(Nanos timeout) {
  if (!tier_) return Status::Ok();
  for (const RecoveredBlocks& part : SplitRecovered(Recovered())) {
    auto answer =
        rpc_.Call<RecoveredBlocks, EmptyMessage>(master_, StoreMsg::kRecoveryReport, part, timeout);
    if (!answer.ok()) {
      return answer.status().WithContext(fmt::format(
          "rank {}: SSD recovery report to the master (rank {})", self_.value, master_.value));
    }
  }
  return Status::Ok();
}

SsdRankCounters StoreRankNode::SsdCounters() {
  if (!service_) return {};
  tier_->Drain();
  const SsdStoreStats s = service_->Stats();
  const hdf5::TierStats t = tier_->Stats();
  SsdRankCounters c;
  c.spilled = s.spilled, c.spills_refused = s.spills_refused, c.spill_errors = s.spill_errors;
  c.promoted = s.promoted, c.reads_served = s.reads_served, c.read_failures = s.read_failures;
  c.dropped_by_lru = s.dropped_by_lru, c.blocks_on_disk = t.blocks, c.buckets = t.buckets;
  return c;
}

}  // namespace mooncake::store
