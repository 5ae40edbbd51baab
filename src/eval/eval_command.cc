#include "eval/eval_command.h"

#include "common/data_dir.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "common/cli/command_line.h"
#include "eval/eval_options.h"
#include "eval/eval_report.h"
#include "sim/simulator.h"
#include "trace/run_report.h"
#include "trace/trace_reader.h"

namespace mooncake::eval {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int Usage(const Status& s) {
  std::cerr << "mooncake eval: " << s.message() << "\n";
  return kExitUsage;
}

// Bad input (a malformed or missing trace, a bad value) exits 2; anything else 1.
int Fail(const Status& s) {
  if (s.code() == ErrorCode::kInvalidArgument || s.code() == ErrorCode::kNotFound) return Usage(s);
  std::cerr << "mooncake eval: " << s.ToString() << "\n";
  return kExitFailure;
}

// Traces are read once per distinct (path, slice) and shared by the points that use them.
class TraceCache {
 public:
  Result<const std::vector<trace::TraceRequest>*> Get(const EvalOptions& o) {
    const auto& r = o.sched.trace_read;
    const std::string key =
        o.sched.trace_path.empty()
            ? fmt::format("synthetic:{}:{}:{}:{}:{}:{}:{}:{}", o.synthetic.seed,
                          o.synthetic.num_requests, o.synthetic.rate_per_s,
                          o.synthetic.system_prompts, o.synthetic.system_prompt_blocks,
                          o.synthetic.followup_probability, o.synthetic.mean_new_tokens,
                          o.synthetic.mean_output_tokens)
            : fmt::format("{}:{}:{}:{}", o.sched.trace_path, r.offset, r.limit, r.skip_invalid);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second.get();
    auto reqs = std::make_unique<std::vector<trace::TraceRequest>>();
    if (o.sched.trace_path.empty()) {
      *reqs = trace::GenerateSynthetic(o.synthetic);
      if (!o.synthetic_write.empty()) {
        MC_RETURN_IF_ERROR(trace::WriteTraceJsonl(o.synthetic_write, *reqs));
      }
    } else {
      trace::TraceReadStats stats;
      auto read = trace::ReadTrace(o.sched.trace_path, r, &stats);
      if (!read.ok()) return read.status();
      *reqs = std::move(read).value();
      if (reqs->empty()) {
        // Nothing to run is a usage error, not an all-zero table.
        if (r.offset > 0 && stats.valid > 0) {
          return InvalidArgument(
              fmt::format("trace.offset = {} selects no request: {} holds {} requests", r.offset,
                          o.sched.trace_path, stats.valid));
        }
        return InvalidArgument(fmt::format("{} holds no requests ({} line(s), {} invalid)",
                                           o.sched.trace_path, stats.lines, stats.skipped));
      }
      if (stats.skipped > 0) {
        std::cout << fmt::format("trace: skipped {} invalid line(s) of {}\n", stats.skipped,
                                 o.sched.trace_path);
      }
    }
    const auto* ptr = reqs.get();
    cache_[key] = std::move(reqs);
    return ptr;
  }

 private:
  std::map<std::string, std::unique_ptr<std::vector<trace::TraceRequest>>> cache_;
};

struct PointRun {
  sim::SimResult result;
  double wall_s = 0;
};

Result<PointRun> RunPoint(const EvalOptions& o, TraceCache& traces) {
  auto reqs = traces.Get(o);
  if (!reqs.ok()) return reqs.status();
  const auto t0 = std::chrono::steady_clock::now();
  const engine::CostModel cost(o.sched.model, o.sched.hardware);
  auto result = sim::RunSimulation(ToSimConfig(o), cost, **reqs);
  if (!result.ok()) return result.status();
  PointRun run;
  run.result = std::move(result).value();
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  run.result.summary.extra["sim_wall_s"] = run.wall_s;
  return run;
}

}  // namespace

void PlotRunFolder(const std::string& dir) {
  const std::string script = DataDir("tools") + "/plot_run.py";
  if (!std::filesystem::exists("/usr/bin/python3") || !std::filesystem::exists(script)) {
    std::cout << "plots: skipped (/usr/bin/python3 or " << script << " not found)\n";
    return;
  }
  const std::string cmd = fmt::format("/usr/bin/python3 '{}' '{}'", script, dir);
  // The child writes to the same stdout and stderr: what this process printed goes out first,
  // so a file or a pipe holds the lines in the order a terminal shows them.
  std::cout.flush();
  std::fflush(nullptr);
  if (std::system(cmd.c_str()) != 0) std::cout << "plots: the plot script failed (see above)\n";
}

namespace {

trace::RunInfo InfoOf(const EvalOptions& o) {
  return trace::RunInfo{"mooncake eval", o.sched.trace_path, o.config_file,
                        sim::SystemKindName(o.system),
                        conductor::PrefillPolicyName(o.sched.scheduler.policy)};
}

// One run (no --sweep): its run folder, its summary on stdout, and the plots.
int RunSingle(const EvalOptions& base, TraceCache& traces) {
  Result<PointRun> run = RunPoint(base, traces);
  if (!run.ok()) return Fail(run.status());
  Status st = trace::WriteRunFolder(base.out, run->result.records, run->result.summary);
  if (!st.ok()) {
    std::cerr << "mooncake eval: " << st.ToString() << "\n";
    return kExitFailure;
  }
  std::cout << fmt::format(
      "mooncake eval: system {} policy {}, {} requests simulated in {:.3f} s "
      "({:.0f} s of model time)\n",
      sim::SystemKindName(base.system), conductor::PrefillPolicyName(base.sched.scheduler.policy),
      run->result.records.size(), run->wall_s, run->result.model_span_s);
  std::cout << trace::SummaryTable(run->result.summary);
  std::cout << "run folder: " << base.out << "\n";
  (void)trace::WriteRunInfo(base.out, InfoOf(base));
  if (base.plots) PlotRunFolder(base.out);
  return run->result.summary.lost == 0 ? kExitOk : kExitFailure;
}

// A sweep: this rank's points, each with its run folder under points/; rank 0 gathers every
// rank's rows into sweep.csv.
int RunSweep(const EvalOptions& base, const std::vector<SweepPoint>& points,
             const std::vector<EvalOptions>& point_options, TraceCache& traces,
             const SweepComm& comm) {
  std::string rows;
  int status = kExitOk;
  for (size_t i : PointsForRank(points.size(), comm.rank, comm.size)) {
    const EvalOptions& o = point_options[i];
    Result<PointRun> run = RunPoint(o, traces);
    if (!run.ok()) {
      status = Fail(run.status().WithContext("point " + std::to_string(i)));
      continue;
    }
    const std::string dir = fmt::format("{}/points/{:03d}", base.out, i);
    Status st = trace::WriteRunFolder(dir, run->result.records, run->result.summary);
    if (!st.ok()) {
      std::cerr << "mooncake eval: " << st.ToString() << "\n";
      status = kExitFailure;
    }
    std::cout << fmt::format("point {:3d} [{}] rank {}: {}", i, PointLabel(points[i]), comm.rank,
                             OneLineSummary(run->result.summary, run->wall_s))
              << std::endl;
    rows += SweepCsvRow(i, points[i], o, run->result, run->wall_s);
  }
  const std::vector<std::string> gathered = comm.gather(rows);
  if (comm.rank == 0) {
    Status st = trace::WriteTextFile(base.out + "/sweep.csv",
                                     SweepCsvHeader(base.sweep) + SortRows(gathered));
    if (!st.ok()) {
      std::cerr << "mooncake eval: " << st.ToString() << "\n";
      return kExitFailure;
    }
    std::cout << "sweep: " << points.size() << " points, " << base.out << "/sweep.csv\n";
    (void)trace::WriteRunInfo(base.out, InfoOf(base));
    if (base.plots) PlotRunFolder(base.out);
  }
  return status;
}

}  // namespace

int RunEvalCommand(int argc, char** argv) { return RunEvalCommand(argc, argv, SerialSweepComm()); }

int RunEvalCommand(int argc, char** argv, const SweepComm& comm) {
  std::vector<std::string> args =
      cli::CanonicalArgs(std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
  std::string help;
  Result<EvalOptions> base = ParseEvalOptions(args, {}, &help);
  if (!base.ok()) {
    if (base.status().code() == ErrorCode::kNotFound && base.status().message().empty()) {
      if (comm.rank == 0) std::cout << help;
      return kExitOk;
    }
    return Usage(base.status());
  }
  // Every point is parsed (validated) before any runs.
  const std::vector<SweepPoint> points = CartesianPoints(base->sweep);
  std::vector<EvalOptions> point_options;
  for (const SweepPoint& p : points) {
    Result<EvalOptions> o = ParseEvalOptions(args, p, &help);
    if (!o.ok()) return Usage(o.status().WithContext(PointLabel(p)));
    point_options.push_back(std::move(o).value());
  }
  TraceCache traces;
  const bool sweep = !base->sweep.empty();
  if (!sweep && comm.size > 1) {
    // One run needs one rank: the others would run the same simulation into the same files.
    if (comm.rank != 0) return kExitOk;
    std::cout << "mooncake eval: one run (no --sweep) on rank 0 of " << comm.size
              << "; give --sweep to split points over the ranks\n";
  }
  if (!sweep) return RunSingle(*base, traces);
  return RunSweep(*base, points, point_options, traces, comm);
}

}  // namespace mooncake::eval
