#include "cluster/check_job.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/block_content.h"
#include "common/checksum.h"
#include "common/log.h"
#include "common/message_ids.h"
#include "common/run_folder.h"
#include "common/units.h"
#include "common/wire.h"

namespace mooncake::cluster {
namespace {

// The check's view of its rank: the config and the rank's bootstrap, roles and planes.
struct JobContext {
  const CheckJobConfig& options;
  const Bootstrap& mpi;
  const RoleTable& roles;
  transport::Transport& transport;
  transport::Rpc& rpc;
  const std::vector<PeerInfo>& peers;
  std::byte* local_buffer;

  int rank() const { return mpi.rank(); }
  Role role() const { return roles.role(mpi.rank()); }
};

// What every rank reports to the conductor at the end (gathered over MPI).
struct RankReport {
  double rtt_min_us = 0, rtt_median_us = 0, rtt_max_us = 0;
  uint32_t rtt_samples = 0;
  uint32_t blocks_written = 0, blocks_verified = 0, checksum_failures = 0;
  uint32_t deadline_failures = 0;  // calls that failed at their deadline, as expected
  uint32_t errors = 0;             // anything else that went wrong
  std::string paths;               // UCX transports of this rank's endpoints
  std::string first_error;

  std::vector<std::byte> Encode() const {
    WireWriter w;
    w.Put(rtt_min_us);
    w.Put(rtt_median_us);
    w.Put(rtt_max_us);
    for (uint32_t v : {rtt_samples, blocks_written, blocks_verified, checksum_failures,
                       deadline_failures, errors}) {
      w.Put(v);
    }
    w.PutString(paths);
    w.PutString(first_error);
    return w.Take();
  }
  static bool Decode(std::span<const std::byte> b, RankReport* r) {
    WireReader in(b);
    in.Get(&r->rtt_min_us);
    in.Get(&r->rtt_median_us);
    in.Get(&r->rtt_max_us);
    for (uint32_t* v : {&r->rtt_samples, &r->blocks_written, &r->blocks_verified,
                        &r->checksum_failures, &r->deadline_failures, &r->errors}) {
      in.Get(v);
    }
    in.GetString(&r->paths);
    in.GetString(&r->first_error);
    return in.done();
  }
  void Fail(const Status& s) {
    ++errors;
    if (first_error.empty()) first_error = s.ToString();
    log::Error("{}", s.ToString());
  }
};

const uint64_t kModelTag = ModelTag("foundation");

// Where prefill rank #p puts its block: store #(p % S) at slot p / S.
struct BlockPlace {
  int store_rank;
  uint64_t remote_addr;
  uint64_t hash_id;
};

Result<BlockPlace> PlaceOf(const JobContext& ctx, int prefill_index) {
  auto stores = ctx.roles.RanksOf(Role::kStore);
  int s = stores[prefill_index % stores.size()];
  uint64_t slot = prefill_index / stores.size();
  uint64_t offset = slot * ctx.options.block_size;
  const auto& regions = ctx.peers[s].regions;
  if (regions.empty() || offset + ctx.options.block_size > regions[0].length) {
    return NoSpace("store rank " + std::to_string(s) + " has no room for block " +
                   std::to_string(prefill_index) + " (store.dram too small for job.block_size)");
  }
  return BlockPlace{s, regions[0].addr + offset, static_cast<uint64_t>(prefill_index) + 1};
}

void PingPeers(JobContext& ctx, RankReport* report) {
  std::vector<double> rtts;
  SteadyClock clock;
  for (int peer = 0; peer < ctx.roles.size(); ++peer) {
    if (peer == ctx.rank() || ctx.rank() == ctx.options.silent_rank) continue;
    const bool silent = peer == ctx.options.silent_rank;
    for (int i = 0; i < (silent ? 1 : ctx.options.ping_rounds); ++i) {
      Nanos t0 = clock.Now();
      auto reply = ctx.rpc.Call(Rank{peer}, CheckMsg::kPing, {}, ctx.options.rpc_timeout);
      Nanos elapsed = clock.Now() - t0;
      if (silent) {
        bool named =
            reply.status().message().find("rank " + std::to_string(peer)) != std::string::npos;
        // At its deadline: not before it, and not long after (a loaded machine gets a second).
        const Nanos deadline = ctx.options.rpc_timeout;
        if (reply.status().code() == ErrorCode::kTimeout && named && elapsed >= deadline &&
            elapsed < deadline * 2 + Nanos(1'000'000'000)) {
          ++report->deadline_failures;
          log::Info("call to silent rank {} failed at its deadline as expected: {}", peer,
                    reply.status().ToString());
        } else {
          report->Fail(
              Internal("call to silent rank " + std::to_string(peer) +
                       " did not fail with a timeout naming it: " + reply.status().ToString()));
        }
        continue;
      }
      if (!reply.ok()) {
        report->Fail(reply.status());
        break;
      }
      rtts.push_back(std::chrono::duration<double, std::micro>(elapsed).count());
    }
  }
  if (!rtts.empty()) {
    std::sort(rtts.begin(), rtts.end());
    report->rtt_min_us = rtts.front();
    report->rtt_median_us = rtts[rtts.size() / 2];
    report->rtt_max_us = rtts.back();
    report->rtt_samples = static_cast<uint32_t>(rtts.size());
  }
}

// One one-sided transfer of `block` to or from the block's place; a failed one names the rank.
Status MoveBlock(JobContext& ctx, transport::OpKind op, const BlockPlace& place,
                 std::span<std::byte> block) {
  transport::TransferRequest req{op, block.data(), Rank{place.store_rank}, place.remote_addr,
                                 block.size()};
  auto batch = ctx.transport.Submit(std::span(&req, 1));
  if (!batch.ok()) return batch.status();
  Status s = (*batch)->Wait(ctx.options.phase_timeout);
  if (s.ok()) return s;
  const char* what = op == transport::OpKind::kWrite ? "writing block to" : "reading block from";
  return s.WithContext(std::string(what) + " store rank " + std::to_string(place.store_rank));
}

void WriteBlock(JobContext& ctx, RankReport* report) {
  int p = ctx.roles.IndexInRole(ctx.rank());
  auto place = PlaceOf(ctx, p);
  if (!place.ok()) return report->Fail(place.status());
  std::span<std::byte> block(ctx.local_buffer, ctx.options.block_size);
  FillBlockContent({place->hash_id, 0, kModelTag}, block);
  Status s = MoveBlock(ctx, transport::OpKind::kWrite, *place, block);
  if (!s.ok()) return report->Fail(s);
  ++report->blocks_written;
}

void ReadAndVerifyBlock(JobContext& ctx, RankReport* report) {
  int prefills = ctx.roles.count(Role::kPrefill);
  int p = ctx.roles.IndexInRole(ctx.rank()) % prefills;
  auto place = PlaceOf(ctx, p);
  if (!place.ok()) return report->Fail(place.status());
  std::span<std::byte> block(ctx.local_buffer, ctx.options.block_size);
  std::fill(block.begin(), block.end(), std::byte{0});
  Status s = MoveBlock(ctx, transport::OpKind::kRead, *place, block);
  if (!s.ok()) return report->Fail(s);
  std::vector<std::byte> expected(block.size());
  FillBlockContent({place->hash_id, 0, kModelTag}, expected);
  if (Checksum64(block.data(), block.size()) == Checksum64(expected.data(), expected.size()) &&
      VerifyBlockContent({place->hash_id, 0, kModelTag}, block)) {
    ++report->blocks_verified;
  } else {
    ++report->checksum_failures;
    log::Error("block {} read from store rank {} has wrong bytes", place->hash_id,
               place->store_rank);
  }
}

// Microseconds in the unit that fits ("12.345 us", "376.270 ms", "1.204 s"): a loaded machine's
// RTT in ms was hard to read as "376270.2 us".
std::string Us(double v) {
  return FormatDuration(std::chrono::nanoseconds(static_cast<int64_t>(v * 1e3 + 0.5)));
}

int Summarise(JobContext& ctx, const std::vector<RankReport>& reports) {
  const CheckJobConfig& o = ctx.options;
  std::vector<double> mins, medians, maxs;
  uint32_t written = 0, verified = 0, failures = 0, deadline = 0, errors = 0, samples = 0;
  for (const auto& r : reports) {
    if (r.rtt_samples) {
      mins.push_back(r.rtt_min_us);
      medians.push_back(r.rtt_median_us);
      maxs.push_back(r.rtt_max_us);
    }
    samples += r.rtt_samples;
    written += r.blocks_written;
    verified += r.blocks_verified;
    failures += r.checksum_failures;
    deadline += r.deadline_failures;
    errors += r.errors;
  }
  std::sort(medians.begin(), medians.end());
  double rtt_min = mins.empty() ? 0 : *std::min_element(mins.begin(), mins.end());
  double rtt_med = medians.empty() ? 0 : medians[medians.size() / 2];
  double rtt_max = maxs.empty() ? 0 : *std::max_element(maxs.begin(), maxs.end());
  const int decodes = ctx.roles.count(Role::kDecode);
  const bool ok = errors == 0 && failures == 0 && verified == static_cast<uint32_t>(decodes);

  auto folder = RunFolder::Create(o.out_dir);
  nlohmann::json j;
  j["job"] = "foundation";
  j["world_size"] = ctx.roles.size();
  j["roles"] = ctx.roles.Summary();
  j["rpc_rtt_us"] = {{"min", rtt_min},
                     {"median_of_rank_medians", rtt_med},
                     {"max", rtt_max},
                     {"samples", samples}};
  j["blocks"] = {{"size_bytes", o.block_size},
                 {"written", written},
                 {"verified", verified},
                 {"checksum_failures", failures}};
  j["deadline_failures_expected"] = deadline;
  j["errors"] = errors;
  j["requests"] = {{"total", 0}, {"completed", 0}, {"rejected", 0}, {"lost", 0}};
  for (size_t r = 0; r < reports.size(); ++r) {
    j["ranks"].push_back({{"rank", r},
                          {"role", RoleName(ctx.roles.role(r))},
                          {"host", ctx.peers[r].host},
                          {"ucx", reports[r].paths},
                          {"error", reports[r].first_error}});
  }
  if (folder.ok()) {
    Status s = folder->WriteText("summary.json", j.dump(2) + "\n");
    if (!s.ok()) log::Error("{}", s.ToString());
  } else {
    log::Error("{}", folder.status().ToString());
  }

  std::printf("\n== mooncake summary ==\n");
  std::printf("%-28s %d (%s)\n", "ranks", ctx.roles.size(), ctx.roles.Summary().c_str());
  std::printf("%-28s min %s  median %s  max %s  (%u calls)\n", "rpc rtt, all pairs",
              Us(rtt_min).c_str(), Us(rtt_med).c_str(), Us(rtt_max).c_str(), samples);
  std::printf("%-28s written %u, read back and verified %u of %d (%s each), checksum failures %u\n",
              "kv blocks (one-sided)", written, verified, decodes,
              FormatBytes(o.block_size).c_str(), failures);
  if (o.silent_rank >= 0) {
    std::printf("%-28s %u calls to silent rank %d failed at their deadline\n", "rpc deadlines",
                deadline, o.silent_rank);
  }
  std::printf("%-28s %s\n", "errors", errors ? reports[0].first_error.c_str() : "none");
  for (const auto& r : reports) {
    if (!r.first_error.empty()) std::printf("%-28s %s\n", "  error", r.first_error.c_str());
  }
  if (folder.ok()) std::printf("%-28s %s\n", "run folder", folder->path().c_str());
  std::printf("%-28s %s\n", "result", ok ? "OK" : "FAILED");
  std::fflush(stdout);
  return ok ? 0 : 1;
}

}  // namespace

int RunCheckJob(const CheckJobConfig& config, const CheckJobRank& rank) {
  JobContext ctx{config,   rank.bootstrap, rank.roles,       rank.transport,
                 rank.rpc, rank.peers,     rank.local_buffer};
  RankReport report;
  const Role role = ctx.role();
  std::atomic<bool> stop{false};
  transport::CheckRegistered(ctx.rpc.Register(
      CheckMsg::kStop, [&stop](Rank, std::span<const std::byte>, transport::Responder r) {
        r.Reply({});
        stop = true;
      }));
  if (ctx.rank() == ctx.options.silent_rank) {
    transport::CheckRegistered(ctx.rpc.Register(
        CheckMsg::kPing, [](Rank, std::span<const std::byte>, transport::Responder) {}));
  } else {
    transport::CheckRegistered(ctx.rpc.Register(
        CheckMsg::kPing,
        [](Rank, std::span<const std::byte>, transport::Responder r) { r.Reply({}); }));
  }
  std::set<std::string> paths;
  for (int p = 0; p < ctx.roles.size(); ++p) {
    if (p == ctx.rank()) continue;
    std::string path = ctx.transport.DescribePath(Rank{p});
    log::Info("endpoint to rank {} ({}): {}", p, RoleName(ctx.roles.role(p)), path);
    paths.insert(path);
  }
  for (const auto& p : paths) report.paths += (report.paths.empty() ? "" : "; ") + p;

  auto barrier = [&](const char* phase) {
    Status s = ctx.mpi.Barrier(ctx.options.phase_timeout, phase);
    if (!s.ok()) {
      log::Error("{}", s.ToString());
      ctx.mpi.Abort(3);
    }
  };
  // Handlers must be in place on every rank before anyone calls.
  barrier("register handlers");
  PingPeers(ctx, &report);
  barrier("ping");
  if (role == Role::kPrefill) WriteBlock(ctx, &report);
  barrier("write");
  if (role == Role::kDecode) ReadAndVerifyBlock(ctx, &report);
  barrier("read");

  // Orderly shutdown: the conductor tells every rank to stop; each acknowledges.
  if (role == Role::kConductor) {
    for (int p = 0; p < ctx.roles.size(); ++p) {
      if (p == ctx.rank()) continue;
      auto r = ctx.rpc.Call(Rank{p}, CheckMsg::kStop, {}, ctx.options.rpc_timeout);
      if (!r.ok()) report.Fail(r.status().WithContext("stop"));
    }
  } else {
    SteadyClock clock;
    const Nanos deadline = clock.Now() + ctx.options.phase_timeout;
    while (!stop && clock.Now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!stop) report.Fail(Timeout("no stop message from the conductor"));
  }
  auto reported = ctx.mpi.Gather(report.Encode(), ctx.roles.conductor().value, "reports",
                                 ctx.options.phase_timeout);
  if (!reported.ok()) {
    log::Error("{}", reported.status().ToString());
    ctx.mpi.Abort(3);
  }
  const auto& gathered = *reported;
  if (role != Role::kConductor) return report.errors == 0 && report.checksum_failures == 0 ? 0 : 1;
  std::vector<RankReport> reports(gathered.size());
  for (size_t r = 0; r < gathered.size(); ++r) {
    if (!RankReport::Decode(gathered[r], &reports[r])) {
      reports[r].Fail(ProtocolError("malformed report from rank " + std::to_string(r)));
    }
  }
  return Summarise(ctx, reports);
}

}  // namespace mooncake::cluster
