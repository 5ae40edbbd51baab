#include "app/store_rank.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app/bootstrap_deadline.h"
#include "app/run_folder.h"
#include "common/log.h"
#include "common/units.h"
#include "common/wire.h"

namespace mooncake::app {

using cluster::Role;

uint64_t WallClockVersion() {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return static_cast<uint64_t>(std::max<int64_t>(ns.count(), 1));
}

std::string CollectiveRunDir(JobContext& ctx) {
  std::string mine;
  if (ctx.rank() == 0) {
    auto folder = RunFolder::Create(ctx.options.out_dir);
    mine = folder.ok() ? folder->path() : ctx.options.out_dir;
  }
  auto all = OrEndBootstrap(
      ctx.mpi.AllGather(std::as_bytes(std::span<const char>(mine.data(), mine.size())),
                        "run folder", ctx.options.phase_timeout),
      ctx.options, ctx.mpi);
  return std::string(reinterpret_cast<const char*>(all[0].data()), all[0].size());
}

Status SetUpSsd(JobContext& ctx, const std::string& run_dir, store::MasterService* master,
                SsdJob* job) {
  const JobOptions& o = ctx.options;
  if (ctx.role() == Role::kConductor && master != nullptr) {
    store::SpillCoordinatorConfig cc;
    cc.max_pending_bytes = o.store_spill_queue;
    cc.batch = 64;  // smaller answers free reserved DRAM sooner
    cc.rpc_timeout = o.phase_timeout;
    job->coordinator = std::make_unique<store::SpillCoordinator>(ctx.rpc, *master, cc);
    job->coordinator->Start();
    return Status::Ok();
  }
  if (ctx.role() != Role::kStore) return Status::Ok();
  std::string base = o.store_ssd_dir.empty() ? run_dir + "/ssd" : o.store_ssd_dir;
  store::hdf5::Hdf5TierOptions t;
  t.dir = base + "/rank" + std::to_string(ctx.rank());
  t.capacity = o.store_ssd_capacity;
  // Four buckets at least, so the tier's LRU (whole buckets) never drops most of it at once.
  t.bucket_bytes =
      std::clamp<uint64_t>(o.store_ssd_capacity / 4 / (1 << 20) * (1 << 20), 16 << 20, 256 << 20);
  t.queue_bytes = o.store_spill_queue;
  t.evict_lru = !o.store_keep_when_full;  // keep: a full tier refuses spills, deletes nothing
  t.cluster_id = "mooncake";
  t.model_preset = job->model_preset.empty() ? o.sched.model.name : job->model_preset;
  t.kv_layout = job->kv_layout.empty()
                    ? "block of " + std::to_string(o.kv_scale) + " x the model's KV bytes"
                    : job->kv_layout;
  t.store_rank = ctx.rank();
  SsdJob* self = job;
  t.on_drop_block = [self](const store::hdf5::SsdBlock& b) {
    if (self->service) self->service->OnTierDrop(b);
  };
  auto tier = store::hdf5::Hdf5Tier::Open(t, &job->recovery);
  if (!tier.ok()) return tier.status().WithContext("SSD tier in " + t.dir);
  job->tier = std::move(*tier);
  if (job->recovery.files > 0) {
    log::Info("SSD tier {}: {} blocks recovered, {} dropped, {} files ({} unreadable)", t.dir,
              job->recovery.recovered, job->recovery.dropped, job->recovery.files,
              job->recovery.unreadable_files);
  }
  // Everything recovery dropped, file by file with the reason, at the default log level.
  for (const std::string& note : job->recovery.file_notes) {
    log::Warn("SSD recovery on rank {}: {}", ctx.rank(), note);
  }
  // Remote SSD reads land in a staging region registered with the transport (kSsdStage).
  store::SsdStoreServiceConfig sc;
  sc.transport = &ctx.transport;
  job->service = std::make_unique<store::SsdStoreService>(
      ctx.rpc, *job->tier, std::span<std::byte>(ctx.local_buffer, ctx.local_buffer_size), Rank{0},
      sc);
  job->service->Start();
  return Status::Ok();
}

void CollectiveAdmitRecovered(JobContext& ctx, SsdJob& job) {
  std::vector<std::byte> mine;
  if (job.tier) mine = store::Encode(store::ToRecoveredBlocks(job.recovery));
  auto all =
      OrEndBootstrap(ctx.mpi.Gather(mine, 0, "SSD recovery reports", ctx.options.phase_timeout),
                     ctx.options, ctx.mpi);
  if (ctx.rank() != 0 || !job.coordinator) return;
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    store::RecoveredBlocks blocks;
    Status s = store::Decode(all[r], &blocks);
    if (!s.ok()) {
      log::Error("recovery report of rank {}: {}", r, s.ToString());
      continue;
    }
    job.coordinator->AddRecovered(Rank{static_cast<int>(r)}, blocks);
    for (const auto& b : blocks.blocks) job.recovered_keys.push_back(b.key);
    job.recovered += blocks.blocks.size();
    job.dropped_at_recovery += blocks.dropped;
    job.recovery_torn += blocks.dropped_torn;
    job.recovery_superseded += blocks.dropped_superseded;
    job.recovery_tombstoned += blocks.dropped_tombstoned;
    job.recovery_unreadable_files += blocks.unreadable_files;
  }
  // The master keeps one version per key over all ranks: a lower one another rank recovered is
  // superseded too (SpillCoordinator counts it as rejected).
  if (job.recovered + job.dropped_at_recovery + job.recovery_unreadable_files > 0) {
    std::printf(
        "store: %llu SSD blocks recovered, %llu dropped (%llu torn, %llu superseded, %llu "
        "tombstoned), %llu unreadable files\n",
        static_cast<unsigned long long>(job.recovered),
        static_cast<unsigned long long>(job.dropped_at_recovery),
        static_cast<unsigned long long>(job.recovery_torn),
        static_cast<unsigned long long>(job.recovery_superseded),
        static_cast<unsigned long long>(job.recovery_tombstoned),
        static_cast<unsigned long long>(job.recovery_unreadable_files));
    std::fflush(stdout);
  }
}

void StopSpilling(SsdJob& job) {
  if (job.coordinator) job.coordinator->Stop();
}

std::vector<uint64_t> SsdCounters(SsdJob& job) {
  if (!job.service) return {};
  job.tier->Drain();
  store::SsdStoreStats s = job.service->Stats();
  store::hdf5::TierStats t = job.tier->Stats();
  return {s.spilled,       s.spills_refused, s.spill_errors, s.promoted, s.reads_served,
          s.read_failures, s.dropped_by_lru, t.blocks,       t.buckets};
}

std::string SsdSummary(SsdJob& job, store::MasterService* master, std::vector<uint64_t> sum,
                       std::map<std::string, double>* extra) {
  if (master == nullptr) return "";
  sum.resize(9, 0);
  store::SpillCoordinatorStats c =
      job.coordinator ? job.coordinator->Stats() : store::SpillCoordinatorStats{};
  store::MasterStats m = master->WithMaster([](store::MetadataMaster& mm) { return mm.Stats(); });
  const uint64_t dropped = c.refused_at_conductor + c.refused_by_tier + c.spill_failures;
  auto& e = *extra;
  e["ssd_blocks_spilled"] = static_cast<double>(c.spilled);
  // Declined spills stayed in DRAM (store.when_full = keep) or were dropped (evict): the
  // master's objects_lost_* counters say what became of the objects.
  e["ssd_spills_declined_queue_full"] =
      static_cast<double>(c.refused_at_conductor + c.refused_by_tier);
  e["ssd_spills_failed_kept_in_dram"] = static_cast<double>(m.spills_failed_kept);
  e["ssd_spill_failures"] = static_cast<double>(c.spill_failures);
  e["ssd_hits"] = static_cast<double>(m.ssd_hits);
  e["ssd_blocks_read"] = static_cast<double>(sum[4]);
  e["ssd_read_failures"] = static_cast<double>(sum[5]);
  e["ssd_promotions"] = static_cast<double>(c.promotions);
  e["ssd_dropped_by_tier_lru"] = static_cast<double>(sum[6]);
  e["ssd_blocks_on_disk"] = static_cast<double>(sum[7]);
  e["ssd_blocks_recovered"] = static_cast<double>(job.recovered);
  e["ssd_blocks_dropped_at_recovery"] = static_cast<double>(job.dropped_at_recovery);
  e["ssd_recovery_dropped_torn"] = static_cast<double>(job.recovery_torn);
  e["ssd_recovery_dropped_superseded"] = static_cast<double>(job.recovery_superseded);
  e["ssd_recovery_dropped_tombstoned"] = static_cast<double>(job.recovery_tombstoned);
  e["ssd_recovery_unreadable_files"] = static_cast<double>(job.recovery_unreadable_files);
  e["ssd_recovery_rejected_by_master"] = static_cast<double>(c.recovery_rejected);
  e["ssd_tombstones_written"] = static_cast<double>(c.tombstones);
  e["ssd_tombstone_failures"] = static_cast<double>(c.tombstone_failures);
  char line[512];
  std::snprintf(
      line, sizeof line,
      "%-28s %llu spilled (%llu not: queue full or error), %llu hits from SSD "
      "(%llu read failures), %llu promoted; %llu recovered, %llu dropped at recovery\n",
      "ssd tier", static_cast<unsigned long long>(c.spilled),
      static_cast<unsigned long long>(dropped), static_cast<unsigned long long>(m.ssd_hits),
      static_cast<unsigned long long>(sum[5]), static_cast<unsigned long long>(c.promotions),
      static_cast<unsigned long long>(job.recovered),
      static_cast<unsigned long long>(job.dropped_at_recovery));
  return line;
}

}  // namespace mooncake::app
