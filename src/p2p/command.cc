#include "p2p/command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>

#include "common/units.h"

#include "common/checksum.h"
#include "common/log.h"
#include "p2p/report.h"

namespace mooncake::p2p {

// Who does what, from the rank list and the hosts.
struct P2pCommand::Plan {
  int32_t self = 0;
  bool source = false;
  std::string name;
  std::vector<int32_t> host_mates;  // receivers on this rank's host, ascending
  uint32_t stripe = 0;              // this rank's (or its host's) place among the fetchers
  uint32_t stripes = 1;
  std::vector<int32_t> stripe_owners;  // the first fetching rank of each stripe
  FetchTarget target;
};

P2pCommand::P2pCommand(CommandConfig config, transport::Transport& transport, transport::Rpc& rpc)
    : config_(std::move(config)),
      transport_(transport),
      name_(config_.name.empty() ? ObjectNameOf(config_.source) : config_.name) {
  const Rank self = transport.self();
  if (self.value == config_.tracker_rank) {
    tracker_ = std::make_unique<Tracker>(
        TrackerConfig{transport.world_size(), config_.peer_timeout, 3, config_.tracker_rank},
        clock_);
    ServeTracker(*tracker_, rpc);
    client_ = MakeLocalTrackerClient(*tracker_, self);
  } else {
    client_ = MakeRemoteTrackerClient(rpc, Rank{config_.tracker_rank}, config_.rpc_timeout);
  }
  node_ = std::make_unique<P2pNode>(config_.p2p, transport, *client_);
}

P2pCommand::~P2pCommand() = default;

void P2pCommand::TransportClosed() { node_->TransportClosed(); }

RankReport P2pCommand::RunSource() {
  RankReport report;
  report.rank = transport_.self().value;
  report.role = RankRole::kSource;
  auto fail = [&](const Status& s) {
    report.error = s.ToString();
    log::Error("p2p: rank {} cannot serve {}: {}", report.rank, config_.source, report.error);
    return report;
  };
  auto files = ScanSource(config_.source);
  if (!files.ok()) return fail(files.status());
  const bool damage = config_.corrupt_rank == report.rank;
  std::unique_ptr<LocalObject> copy;
  const std::string name = config_.name.empty() ? ObjectNameOf(config_.source) : config_.name;
  auto manifest = node_->PrepareSource(name, *files, config_.in_memory, damage, &copy);
  if (!manifest.ok()) return fail(manifest.status());
  if (damage) {  // fault.corrupt: every piece served with one byte flipped (never the file)
    const PieceLayout layout(manifest->entries, manifest->piece_size);
    for (size_t p = 0; p < layout.count(); ++p) {
      copy->entry_data(layout[p].entry)[layout[p].offset + layout[p].length / 2] ^= std::byte{0x5a};
    }
    log::Warn("p2p: rank {} serves every piece damaged (fault.corrupt)", report.rank);
  }
  Status s = node_->Register(*manifest, std::move(copy));
  if (!s.ok()) return fail(s);
  report.ok = true;
  report.bytes = manifest->total_bytes();
  return report;
}

RankReport P2pCommand::FetchInto(const Plan& plan, const FetchTarget& target,
                                 Heartbeat& heartbeat) {
  RankReport report;
  report.rank = plan.self;
  report.role = RankRole::kFetch;
  FetchOptions options;
  options.stripe = plan.stripe;
  options.stripes = plan.stripes;
  options.stripe_owners = plan.stripe_owners;
  options.cancel = &heartbeat.cancel();
  if (config_.kill_rank == plan.self) {
    const uint64_t after = config_.kill_after;
    options.on_piece = [after, self = plan.self](uint64_t verified) {
      if (verified < after) return;
      std::fprintf(stderr, "p2p: rank %d kills itself after %llu pieces (fault.kill)\n", self,
                   static_cast<unsigned long long>(verified));
      std::fflush(nullptr);
      std::raise(SIGKILL);
    };
  }
  auto stats = node_->Fetch(plan.name, target, options);
  if (!stats.ok()) {
    report.error = stats.status().ToString();
    if (heartbeat.cancel()) report.error += " (" + heartbeat.why() + ")";
    log::Error("p2p: rank {}: {}", plan.self, report.error);
    return report;
  }
  report.ok = true;
  report.bytes = stats->bytes;
  report.fetch_ns = stats->fetch_time.count();
  report.verify_ns = stats->verify_time.count();
  report.from_source = stats->from_source;
  report.from_peers = stats->from_peers;
  report.present = stats->present;
  report.corrupt = stats->corrupt + stats->late_corrupt;
  report.read_failures = stats->read_failures;
  return report;
}

namespace {

// "about N s left" at the receivers' rate so far, or why there is no estimate yet.
std::string TimeLeft(const Tracker::Landing& l) {
  const double secs = static_cast<double>(l.elapsed.count()) / 1e9;
  if (l.landed == 0 || secs <= 0 || l.expected < l.landed) return "time left unknown";
  const double rate = static_cast<double>(l.landed) / secs;
  return fmt::format("about {:.0f} s left",
                     std::ceil(static_cast<double>(l.expected - l.landed) / rate));
}

bool Contains(const std::vector<int32_t>& v, int32_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Every piece of the node's copy under `dir`, checked against the manifest.
RankReport CheckNodeCopy(const Manifest& manifest, const std::string& dir, int32_t self) {
  RankReport report;
  report.rank = self;
  report.role = RankRole::kShare;
  SteadyClock clock;
  const Nanos start = clock.Now();
  auto copy = LocalObject::OpenExistingFiles(manifest, dir);
  if (!copy.ok()) {
    report.error = copy.status().ToString();
    return report;
  }
  const PieceLayout layout(manifest.entries, manifest.piece_size);
  uint64_t bad = 0;
  for (size_t p = 0; p < layout.count(); ++p) {
    const PieceRef& ref = layout[p];
    if (Checksum64((*copy)->entry_data(ref.entry) + ref.offset, ref.length) !=
        manifest.checksums[p]) {
      ++bad;
    }
  }
  report.verify_ns = (clock.Now() - start).count();
  report.ok = bad == 0;
  report.bytes = report.ok ? layout.total_bytes() : 0;
  if (bad > 0) report.error = fmt::format("{} pieces of the node's copy differ", bad);
  return report;
}

}  // namespace

RankReport P2pCommand::Share(const Plan& plan, Heartbeat& heartbeat, int32_t* fetcher) {
  const Nanos deadline = config_.p2p.fetch.deadline + config_.peer_timeout * 2;
  for (;;) {
    const HeartbeatResponse state = heartbeat.state();
    *fetcher = -1;
    for (int32_t r : plan.host_mates) {
      if (!Contains(state.dead, r)) {
        *fetcher = r;
        break;
      }
    }
    if (*fetcher == plan.self) {
      if (plan.self != plan.host_mates.front()) {
        log::Warn("p2p: rank {} takes over its node's copy (the ranks before it died)", plan.self);
      }
      return FetchInto(plan, plan.target, heartbeat);
    }
    const int32_t f = *fetcher;
    const bool settled = heartbeat.WaitFor(
        [f](const HeartbeatResponse& s) { return Contains(s.done, f) || Contains(s.dead, f); },
        deadline);
    RankReport report;
    report.rank = plan.self;
    report.role = RankRole::kShare;
    if (!settled) {
      report.error = heartbeat.lost() ? heartbeat.why()
                                      : fmt::format("rank {} did not finish the node's copy", f);
      return report;
    }
    const HeartbeatResponse now = heartbeat.state();
    if (Contains(now.dead, f)) continue;  // the next live rank of the node fetches
    if (Contains(now.failed, f)) {
      report.error = fmt::format("rank {} failed to fetch the node's copy", f);
      return report;
    }
    auto manifest = client_->Lookup(plan.name);
    if (!manifest.ok()) {
      report.error = manifest.status().ToString();
      return report;
    }
    return CheckNodeCopy(*manifest, config_.dest, plan.self);
  }
}

RankReport P2pCommand::RunReceiver(const Plan& plan, Heartbeat& heartbeat) {
  if (config_.in_memory || config_.copies == Copies::kRank) {
    return FetchInto(plan, plan.target, heartbeat);
  }
  int32_t fetcher = -1;
  return Share(plan, heartbeat, &fetcher);
}

int P2pCommand::Finish(const RankReport& mine, Heartbeat& heartbeat,
                       const std::vector<std::string>& hosts) {
  const int32_t self = transport_.self().value;
  Status s = client_->Done(mine);
  if (!s.ok()) log::Error("p2p: rank {} cannot report to the tracker: {}", self, s.ToString());
  const Nanos deadline = config_.p2p.fetch.deadline + config_.peer_timeout * 4;
  const Nanos start = clock_.Now();
  auto finished = [](const HeartbeatResponse& st) { return st.finished; };
  bool done = false;
  while (!done && clock_.Now() - start < deadline && !heartbeat.lost()) {
    done = heartbeat.WaitFor(finished, tracker_ ? config_.progress_interval : deadline);
    if (!done && tracker_) {
      const auto st = heartbeat.state();
      const Tracker::Landing l = tracker_->LandingOf(name_);
      std::printf(
          "progress: %zu of %d ranks done, %zu dead, %s of %s verified at the receivers, %s\n",
          st.done.size(), transport_.world_size(), st.dead.size(), FormatBytes(l.landed).c_str(),
          FormatBytes(l.expected).c_str(), TimeLeft(l).c_str());
      std::fflush(stdout);
    }
  }
  if (heartbeat.lost()) {
    log::Error("p2p: rank {} ends: {}", self, heartbeat.why());
    return kExitTrackerLost;
  }
  if (!done) log::Error("p2p: rank {}: the other ranks did not finish in time", self);
  (void)client_->Leave();
  if (self != 0) return mine.ok ? 0 : kExitFailed;

  // Rank 0: the table, then wait (briefly) until every rank saw the end and left.
  JobSummary job;
  job.object = name_;
  if (auto m = client_->Lookup(job.object); m.ok()) {
    job.bytes = m->total_bytes();
    job.pieces = static_cast<uint32_t>(m->checksums.size());
    job.piece_size = m->piece_size;
  }
  job.world = transport_.world_size();
  job.hosts = hosts;
  job.reports = tracker_->Reports();
  job.dead = tracker_->DeadRanks();
  job.distribution = tracker_->DistributionTime();
  const Verdict verdict = Judge(job);
  std::fputs(FormatReport(job, verdict).c_str(), stdout);
  std::fflush(stdout);
  if (!config_.csv.empty()) {
    Status written = WriteCsv(config_.csv, job);
    if (!written.ok()) log::Error("p2p: {}", written.ToString());
  }
  const Nanos leave_deadline = clock_.Now() + config_.heartbeat_interval * 5 + config_.rpc_timeout;
  while (!tracker_->AllLeft() && clock_.Now() < leave_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done ? verdict.exit_code : kExitFailed;
}

int P2pCommand::Run(const std::vector<std::string>& hosts) {
  if (tracker_) tracker_->RestartLiveness();  // the ranks just left the bootstrap together
  Plan plan;
  plan.self = transport_.self().value;
  plan.name = name_;
  plan.source = Contains(config_.source_ranks, plan.self);
  const int world = transport_.world_size();
  std::vector<int32_t> fetchers;  // in node mode: the first receiver of each host
  std::vector<std::string> fetcher_hosts;
  const bool per_node = !config_.in_memory && config_.copies == Copies::kNode;
  for (int32_t r = 0; r < world; ++r) {
    if (Contains(config_.source_ranks, r)) continue;
    const std::string& host = hosts[r];
    if (host == hosts[plan.self]) plan.host_mates.push_back(r);
    if (per_node &&
        std::find(fetcher_hosts.begin(), fetcher_hosts.end(), host) != fetcher_hosts.end()) {
      continue;
    }
    fetchers.push_back(r);
    fetcher_hosts.push_back(host);
  }
  plan.stripes = static_cast<uint32_t>(std::max<size_t>(1, fetchers.size()));
  plan.stripe_owners = fetchers;
  // A rank's stripe is its own place among the fetchers; with one copy per node, its node's
  // (a rank taking over its node's copy takes over the node's stripe).
  for (size_t i = 0; i < fetchers.size(); ++i) {
    if (per_node ? fetcher_hosts[i] == hosts[plan.self] : fetchers[i] == plan.self) {
      plan.stripe = static_cast<uint32_t>(i);
    }
  }
  if (!config_.in_memory) {
    plan.target.kind = FetchTarget::Kind::kFiles;
    plan.target.dir = config_.copies == Copies::kRank
                          ? config_.dest + "/rank" + std::to_string(plan.self)
                          : config_.dest;
  }
  Heartbeat heartbeat(*client_, transport_, config_.tracker_rank, config_.heartbeat_interval,
                      config_.peer_timeout * 2, config_.source_ranks);
  const RankReport mine = plan.source ? RunSource() : RunReceiver(plan, heartbeat);
  const int code = Finish(mine, heartbeat, hosts);
  heartbeat.Stop();
  peers_lost_ = !heartbeat.state().dead.empty() || heartbeat.lost();
  return code;
}

}  // namespace mooncake::p2p
