// conductor_bench: the conductor's decisions at scale, full evaluation against the pruned search
// (conductor/scheduler.h). No MPI. For each size N it simulates the trace with N prefill and N
// decode instances at the load of N/8 times the trace's rate (the paper's 8 + 8 at x1), once
// with each search, recording every call the simulator makes to the scheduler; then it replays
// the full run's calls against fresh schedulers of both kinds, timing the conductor alone on one
// thread (median of --repeat replays), and checks that both answer every call as recorded.
// Last line: conductor_bench decisions_per_s_<largest N>=<pruned> ttft_delta=<relative>.
// Exit status: 0, 1 when the two searches disagree on a decision, 2 on a usage error.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli/command_line.h"
#include "conductor/scheduler_calls.h"
#include "eval/eval_options.h"
#include "sim/simulator.h"
#include "trace/trace_reader.h"

namespace {

namespace po = boost::program_options;
using namespace mooncake;

struct BenchOptions {
  std::string trace = "../shared/traces/conversation_trace.jsonl";
  std::string config = "configs/eval/mooncake.ini";
  std::vector<int> sizes;
  int repeat = 3;
  uint64_t limit = 0;
  int pruned_from = conductor::SchedulerConfig{}.pruned_search_from;
};

// CPU seconds of the calling thread: what one core spent, whatever else shares it.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct SearchRun {
  std::vector<conductor::SchedulerCall> calls;
  sim::SimResult result;
  double cpu_s = 0;
};

Result<SearchRun> Simulate(sim::SimConfig config, bool exhaustive, int pruned_from,
                           const engine::CostModel& cost,
                           const std::vector<trace::TraceRequest>& requests) {
  config.scheduler.exhaustive_search = exhaustive;
  config.scheduler.pruned_search_from = pruned_from;
  SearchRun run;
  const double t0 = ThreadCpuSeconds();
  auto r = sim::RunSimulation(config, cost, requests, sim::SimHooks{&run.calls});
  run.cpu_s = ThreadCpuSeconds() - t0;
  if (!r.ok()) return r.status();
  run.result = std::move(*r);
  return run;
}

struct Replay {
  double cpu_s = 0, wall_s = 0;  // medians
  conductor::ReplayOutcome outcome;
  conductor::SearchStats stats;
};

Replay TimeReplays(const std::vector<conductor::SchedulerCall>& calls,
                   conductor::SchedulerConfig config, bool exhaustive,
                   const engine::CostModel& cost, int repeat) {
  config.exhaustive_search = exhaustive;
  std::vector<double> cpu, wall;
  Replay out;
  for (int k = 0; k < repeat; ++k) {
    conductor::Scheduler scheduler(config, &cost);
    const auto w0 = std::chrono::steady_clock::now();
    const double c0 = ThreadCpuSeconds();
    out.outcome = conductor::ReplayCalls(calls, scheduler);
    cpu.push_back(ThreadCpuSeconds() - c0);
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
    out.stats = scheduler.search_stats();
  }
  out.cpu_s = Median(cpu);
  out.wall_s = Median(wall);
  return out;
}

// Requests whose outcome, instances or TTFT differ between the two runs.
int DifferingRequests(const sim::SimResult& a, const sim::SimResult& b) {
  if (a.records.size() != b.records.size()) return static_cast<int>(a.records.size());
  int n = 0;
  for (size_t k = 0; k < a.records.size(); ++k) {
    const auto& x = a.records[k];
    const auto& y = b.records[k];
    if (x.outcome != y.outcome || x.prefill_instance != y.prefill_instance ||
        x.decode_instance != y.decode_instance || x.ttft_s != y.ttft_s) {
      ++n;
    }
  }
  return n;
}

Result<BenchOptions> Parse(int argc, char** argv) {
  BenchOptions o;
  std::string sizes;
  po::options_description d(
      "conductor_bench: the conductor's decisions per second, full evaluation against the pruned\n"
      "search, at N prefill + N decode instances and N/8 times the trace's rate; no MPI.\n"
      "Run from the repository root. Options");
  d.add_options()("help,h", "this text")("trace", po::value(&o.trace)->default_value(o.trace),
                                         "a Mooncake trace (JSONL)")(
      "config", po::value(&o.config)->default_value(o.config),
      "the eval config (model, hardware, policy, SLOs); its cluster and load are replaced")(
      "instances", po::value(&sizes)->default_value("16,128,1024"),
      "sizes N, comma-separated: N prefill and N decode instances each")(
      "repeat", po::value(&o.repeat)->default_value(o.repeat),
      "timed replays per search and size (the median is printed)")(
      "trace-limit", po::value(&o.limit)->default_value(0), "first requests only; 0 = all")(
      "pruned-from", po::value(&o.pruned_from)->default_value(o.pruned_from),
      "the pruned search from this many prefill instances (the scheduler's default); below, "
      "the 'pruned' column is the full evaluation too. 1 = the pruned search at every size");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(d).style(cli::kCommandLineStyle).run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return InvalidArgument(fmt::format("conductor_bench: {}", e.what()));
  }
  if (vm.count("help")) {
    std::cout << d << "\nLast line: conductor_bench decisions_per_s_<largest N>=<n> "
              << "ttft_delta=<(pruned - full) / full mean TTFT>\n";
    return NotFound("");
  }
  std::stringstream in(sizes);
  for (std::string item; std::getline(in, item, ',');) {
    try {
      const int n = std::stoi(item);
      if (n < 1) throw std::out_of_range(item);
      o.sizes.push_back(n);
    } catch (const std::exception&) {
      return InvalidArgument(
          fmt::format("conductor_bench: --instances '{}': '{}' is not a count >= 1", sizes, item));
    }
  }
  if (o.sizes.empty()) return InvalidArgument("conductor_bench: --instances: give at least one");
  if (o.repeat < 1) return InvalidArgument("conductor_bench: --repeat: must be >= 1");
  if (o.pruned_from < 1) return InvalidArgument("conductor_bench: --pruned-from: must be >= 1");
  return o;
}

// The eval options for size n: the config file with n + n instances at load n / 8.
Result<eval::EvalOptions> OptionsFor(const BenchOptions& b, int n) {
  const std::vector<std::string> args = {"--config",          b.config,
                                         "--trace",           b.trace,
                                         "--trace.limit",     std::to_string(b.limit),
                                         "--cluster.prefill", std::to_string(n),
                                         "--cluster.decode",  std::to_string(n),
                                         "--load.scale",      fmt::format("{}", n / 8.0)};
  std::string help;
  return eval::ParseEvalOptions(args, {}, &help);
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = Parse(argc, argv);
  if (!parsed.ok()) {
    if (parsed.status().message().empty()) return 0;  // --help
    std::cerr << parsed.status().message() << "\n";
    return 2;
  }
  const BenchOptions& b = *parsed;
  auto first = OptionsFor(b, b.sizes.front());
  if (!first.ok()) {
    std::cerr << "conductor_bench: " << first.status().message() << "\n";
    return 2;
  }
  auto requests = trace::ReadTrace(b.trace, first->sched.trace_read);
  if (!requests.ok()) {
    std::cerr << "conductor_bench: " << requests.status().message() << "\n";
    return 2;
  }
  std::cout << fmt::format(
      "conductor_bench: {} ({} requests), {}, policy {}; replays timed in thread CPU time, median "
      "of {}\n",
      b.trace, requests->size(), b.config,
      conductor::PrefillPolicyName(first->sched.scheduler.policy), b.repeat);
  std::cout << fmt::format("{:>11} {:>5} {:>10} {:>10} {:>8} {:>13} {:>13} {:>9} {:>9} {:>10}\n",
                           "instances", "load", "full/s", "pruned/s", "speedup", "prefill eval",
                           "decode eval", "sim full", "sim prun", "TTFT s");
  bool all_same = true;
  double last_rate = 0, last_delta = 0;
  int last_n = 0;
  for (int n : b.sizes) {
    auto o = OptionsFor(b, n);
    if (!o.ok()) {
      std::cerr << "conductor_bench: " << o.status().message() << "\n";
      return 2;
    }
    const engine::CostModel cost(o->sched.model, o->sched.hardware);
    const sim::SimConfig config = eval::ToSimConfig(*o);
    auto full = Simulate(config, true, b.pruned_from, cost, *requests);
    auto pruned = full.ok() ? Simulate(config, false, b.pruned_from, cost, *requests) : full;
    if (!pruned.ok()) {
      std::cerr << "conductor_bench: " << pruned.status().message() << "\n";
      return 1;
    }
    conductor::SchedulerConfig sc = sim::EffectiveSchedulerConfig(config);
    sc.pruned_search_from = b.pruned_from;
    const Replay rf = TimeReplays(full->calls, sc, true, cost, b.repeat);
    const Replay rp = TimeReplays(full->calls, sc, false, cost, b.repeat);
    const double d = static_cast<double>(std::max<uint64_t>(1, rp.outcome.decisions));
    const double ttft_full = full->result.summary.ttft_s.mean;
    const double ttft_pruned = pruned->result.summary.ttft_s.mean;
    const int differing = DifferingRequests(full->result, pruned->result);
    const bool same = rf.outcome.differing == 0 && rp.outcome.differing == 0 && differing == 0;
    all_same = all_same && same;
    last_n = n;
    last_rate = d / rp.cpu_s;
    last_delta = ttft_full > 0 ? (ttft_pruned - ttft_full) / ttft_full : 0;
    std::cout << fmt::format(
        "{:>11} {:>5} {:>10.0f} {:>10.0f} {:>7.1f}x {:>6.1f} of {:<4} {:>6.1f} of {:<4} {:>8.2f}s "
        "{:>8.2f}s {:.3f} / {:.3f}{}\n",
        fmt::format("{}+{}", n, n), fmt::format("x{:g}", n / 8.0), d / rf.cpu_s, d / rp.cpu_s,
        rf.cpu_s / rp.cpu_s, static_cast<double>(rp.stats.prefill_evaluated) / d, n,
        static_cast<double>(rp.stats.decode_evaluated) / d, n, full->cpu_s, pruned->cpu_s,
        ttft_full, ttft_pruned,
        !same               ? "  DIFFERENT DECISIONS"
        : n < b.pruned_from ? "  (under --pruned-from: both evaluate every instance)"
                            : "");
    if (!same) {
      std::cout << fmt::format(
          "  replay of the full run's calls: {} answers differ with the pruned search (first at "
          "call {}); simulated requests differing: {}\n",
          rp.outcome.differing, rp.outcome.first_differing, differing);
    }
    std::cout << fmt::format("{:>11} wall: full {:.3f} s, pruned {:.3f} s for {} decisions\n", "",
                             rf.wall_s, rp.wall_s, rp.outcome.decisions);
  }
  std::cout << fmt::format("decisions identical: {}\n", all_same ? "yes" : "NO");
  std::cout << fmt::format("conductor_bench decisions_per_s_{}={:.0f} ttft_delta={:.6f}\n", last_n,
                           last_rate, last_delta);
  return all_same ? 0 : 1;
}
