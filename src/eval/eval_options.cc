#include "eval/eval_options.h"

#include "common/data_dir.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

namespace mooncake::eval {

namespace po = boost::program_options;

po::options_description EvalOptionsDescription() {
  po::options_description all("Usage: mooncake eval [options]\n\nOptions");
  po::options_description general("General");
  general.add_options()("help,h", "print this help, grouped by section")(
      "config", po::value<std::string>(), "INI file of options (the command line overrides it)")(
      "out", po::value<std::string>()->default_value(""),
      "run folder (default runs/eval-<UTC time>)")(
      "system", po::value<std::string>()->default_value("mooncake"),
      "mooncake | vllm | vllm_prefix | vllm_chunked")(
      "plots", po::value<bool>()->default_value(true),
      "write PNG plots with /usr/bin/python3 + matplotlib when present (true | false)");
  all.add(general);
  AddSchedulingOptions(all, DataDir("configs"));
  po::options_description syn("Synthetic workload (used when no trace is given)");
  AddSyntheticOptions(syn);
  syn.add_options()("synthetic.write", po::value<std::string>()->default_value(""),
                    "also write the generated trace (JSONL) here");
  po::options_description sw("Sweep");
  sw.add_options()("sweep", po::value<std::vector<std::string>>()->composing(),
                   "key=v1,v2,... over any option (repeatable: cartesian product); under mpirun "
                   "the points are spread over the ranks; writes sweep.csv");
  all.add(syn).add(sw);
  // The live job's keys, so that one config file drives both the live job and the simulator:
  // `roles` sets the instance counts; the others only matter to live ranks and are ignored here.
  po::options_description live("Live-job keys (accepted so live configs run here too)");
  live.add_options()("roles", po::value<std::string>()->default_value(""),
                     "role layout of the live job; its prefill and decode counts override "
                     "cluster.prefill and cluster.decode")("store.dram", po::value<std::string>(),
                                                           "(live only)")(
      "store.replicas", po::value<std::string>(), "(live only)")(
      "decode.buffer", po::value<std::string>(), "(live only)")(
      "kv_scale", po::value<std::string>(), "(live only)")("transport.tls",
                                                           po::value<std::string>(), "(live only)")(
      "transport.devices", po::value<std::string>(), "(live only)")(
      "transport.data_path", po::value<std::string>(), "(live only)")(
      "job.mode", po::value<std::string>(), "(live only)")("job.rpc_timeout",
                                                           po::value<std::string>(), "(live only)")(
      "job.phase_timeout", po::value<std::string>(), "(live only)")(
      "job.deadline", po::value<std::string>(), "(live only)")(
      "log-level", po::value<std::string>(), "(live only)");
  all.add(live);
  return all;
}

Result<std::pair<int, int>> InstanceCountsFromRoles(const std::string& roles) {
  int prefill = 0, decode = 0;
  std::string word;
  std::istringstream in(roles);
  while (in >> word) {
    std::istringstream items(word);
    std::string item;
    while (std::getline(items, item, ',')) {
      if (item.empty()) continue;
      const size_t colon = item.find(':');
      const std::string name = item.substr(0, colon);
      int n = 1;
      if (colon != std::string::npos) {
        try {
          n = std::stoi(item.substr(colon + 1));
        } catch (const std::exception&) {
          return InvalidArgument(fmt::format("roles = '{}': '{}' is not ROLE:COUNT", roles, item));
        }
      }
      if (name == "prefill") prefill += n;
      if (name == "decode") decode += n;
    }
  }
  if (prefill < 1 || decode < 1) {
    return InvalidArgument(
        fmt::format("roles = '{}': needs at least one prefill and one decode", roles));
  }
  return std::make_pair(prefill, decode);
}

namespace {

std::string DefaultOut() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "runs/eval-%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

}  // namespace

Result<EvalOptions> ParseEvalOptions(const std::vector<std::string>& args,
                                     const SweepPoint& overrides, std::string* help) {
  const po::options_description desc = EvalOptionsDescription();
  po::variables_map vm;
  try {
    if (!overrides.empty()) {
      std::vector<std::string> o;
      for (const auto& [k, v] : overrides) o.push_back("--" + k + "=" + v);
      for (const std::string& a : o) RefusePlaceholders(a);
      po::store(po::command_line_parser(o).options(desc).run(), vm);
    }
    po::store(ParseCommandLine(args, desc), vm);
    if (vm.count("help")) {
      std::ostringstream ss;
      ss << desc << "\nUnits: durations take ns, us, ms, s, min, h. Booleans: true | false.\n";
      *help = ss.str();
      return NotFound("");
    }
    if (vm.count("config")) {
      const std::string file = vm["config"].as<std::string>();
      std::ifstream in(file);
      if (!in) return InvalidArgument(fmt::format("config = '{}': cannot open the file", file));
      po::store(ParseConfigFile(in, desc), vm);
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return InvalidArgument(e.what());
  }
  EvalOptions o;
  if (vm.count("config")) o.config_file = vm["config"].as<std::string>();
  Result<SchedulingSettings> sched = SchedulingFromVariables(vm);
  if (!sched.ok()) return sched.status();
  o.sched = *sched;
  if (const std::string roles = vm["roles"].as<std::string>(); !roles.empty()) {
    auto counts = InstanceCountsFromRoles(roles);
    if (!counts.ok()) return counts.status();
    o.sched.scheduler.prefill_instances = counts->first;
    o.sched.scheduler.decode_instances = counts->second;
  }
  auto system = sim::ParseSystemKind(vm["system"].as<std::string>());
  if (!system.ok()) return system.status();
  o.system = *system;
  o.load_scale = vm["load.scale"].as<double>();
  if (!(o.load_scale > 0) || o.load_scale > 1e6) {
    return InvalidArgument(fmt::format("load.scale = {}: allowed (0, 1e6]", o.load_scale));
  }
  o.out = vm["out"].as<std::string>();
  if (o.out.empty()) o.out = DefaultOut();
  o.plots = vm["plots"].as<bool>();
  Result<trace::SyntheticConfig> synthetic = SyntheticFromVariables(vm, o.sched.seed);
  if (!synthetic.ok()) return synthetic.status();
  o.synthetic = *synthetic;
  o.synthetic_write = vm["synthetic.write"].as<std::string>();
  if (vm.count("sweep")) {
    for (const std::string& spec : vm["sweep"].as<std::vector<std::string>>()) {
      Result<SweepAxis> axis = ParseSweepSpec(spec);
      if (!axis.ok()) return axis.status();
      if (desc.find_nothrow(axis->key, false) == nullptr || axis->key == "sweep") {
        return InvalidArgument(fmt::format("sweep = '{}': '{}' is not an option", spec, axis->key));
      }
      o.sweep.push_back(*axis);
    }
  }
  sim::SimConfig check = ToSimConfig(o);
  MC_RETURN_IF_ERROR(sim::ValidateSimConfig(check));
  return o;
}

sim::SimConfig ToSimConfig(const EvalOptions& o) {
  sim::SimConfig c;
  c.system = o.system;
  c.scheduler = o.sched.scheduler;
  c.chunk_tokens = o.sched.chunk_tokens;
  c.load_scale = o.load_scale;
  c.thresholds = o.sched.thresholds;
  return c;
}

}  // namespace mooncake::eval
