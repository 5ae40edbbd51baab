#include "eval/eval_options.h"

#include "common/data_dir.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "common/cli/command_line.h"
#include "common/cli/config_file.h"
#include "common/units.h"
#include "common/utc_time.h"

namespace mooncake::eval {

namespace po = boost::program_options;

po::options_description EvalOptionsDescription() {
  po::options_description all("Usage: mooncake eval [options]\n\nOptions");
  po::options_description general("General");
  general.add_options()("help,h", "print this help, grouped by section")(
      "config", po::value<std::string>(), "INI file of options (the command line overrides it)")(
      "out", po::value<std::string>()->default_value(""),
      "run folder (default runs/eval-<yyyymmdd-hhmmss, UTC>: named as the live job's, with an "
      "eval- prefix)")("system", po::value<std::string>()->default_value("mooncake"),
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
  po::options_description vllm("vLLM baselines (vLLM 0.5's scheduler limits)");
  vllm.add_options()(
      "vllm.max_num_batched_tokens", po::value<std::string>()->default_value("auto"),
      "tokens one step may process: N | auto (vLLM's default: 512 for vllm_chunked, else "
      "max(vllm.max_model_len, 2048))")(
      "vllm.max_num_seqs", po::value<int64_t>()->default_value(256),
      "sequences running at once on an instance (vLLM's default 256)")(
      "vllm.max_model_len", po::value<std::string>()->default_value("auto"),
      "longest prompt served; longer ones are rejected (prompt_too_long): N | auto (the model "
      "preset's max_context)");
  all.add(syn).add(sw).add(vllm);
  // The live job's keys, so that one config file drives both the live job and the simulator:
  // `roles` sets the instance counts, and its store ranks (with store.dram, store.replicas and
  // kv_scale) the store master the simulator runs; the others only matter to live ranks.
  po::options_description live("Live-job keys (accepted so live configs run here too)");
  live.add_options()("roles", po::value<std::string>()->default_value(""),
                     "role layout of the live job; its prefill and decode counts override "
                     "cluster.prefill and cluster.decode, its store ranks run the store master")(
      "store.dram", po::value<std::string>()->default_value("64MiB"),
      "DRAM of each store rank of `roles` (as the live job's default)")(
      "store.replicas", po::value<int>()->default_value(1),
      "replicas of each KV block on distinct store ranks of `roles`")(
      "kv_scale", po::value<std::string>()->default_value("0.000122"),
      "with store ranks: the store holds blocks of kv_scale x the real size, as the live job "
      "moves them (default 1/8192)")("decode.buffer", po::value<std::string>(), "(live only)")(
      "transport.tls", po::value<std::string>(), "(live only)")(
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

Result<RoleCounts> RoleCountsFromRoles(const std::string& roles) {
  int prefill = 0, decode = 0, store = 0;
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
      if (name == "store") store += n;
    }
  }
  if (prefill < 1 || decode < 1) {
    return InvalidArgument(
        fmt::format("roles = '{}': needs at least one prefill and one decode", roles));
  }
  return RoleCounts{prefill, decode, store};
}

sim::StoreMasterModel StoreMasterFor(const SchedulingSettings& sched, const StoreMasterInputs& in) {
  sim::StoreMasterModel m;
  const engine::CostModel cost(sched.model, sched.hardware);
  const conductor::SchedulerConfig& c = sched.scheduler;
  if (in.store_ranks > 0) {
    m.ranks = in.store_ranks;
    m.rank_bytes = in.store_dram;
    m.block_bytes =
        engine::ScaledKvPieceBytes(cost, in.kv_scale) * static_cast<uint64_t>(sched.model.layers);
    m.replicas = in.replicas;
    m.master.lease =
        Nanos(static_cast<int64_t>(static_cast<double>(m.master.lease.count()) * sched.time_scale));
  } else if (c.shared_pool && c.cache_capacity_blocks > 0) {
    m.ranks = c.prefill_instances;
    m.block_bytes = cost.KvBytesPerBlock();
    const uint64_t per_rank = (c.cache_capacity_blocks + m.ranks - 1) / m.ranks;
    m.rank_bytes = per_rank * m.block_bytes;
  }
  return m;
}

namespace {

// `key` = auto (0) or a whole number >= 1.
Status AutoOrCount(const po::variables_map& vm, const char* key, int64_t* out) {
  const std::string text = vm[key].as<std::string>();
  if (text == "auto") {
    *out = 0;
    return Status::Ok();
  }
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 1 || v > (1LL << 40)) {
    return InvalidArgument(fmt::format("{} = '{}': expected auto or a count >= 1", key, text));
  }
  *out = v;
  return Status::Ok();
}

// The vllm.* limits and the store master the simulator runs.
Status ReadSimModelOptions(const po::variables_map& vm, int store_ranks, EvalOptions* o) {
  MC_RETURN_IF_ERROR(
      AutoOrCount(vm, "vllm.max_num_batched_tokens", &o->vllm.max_num_batched_tokens));
  MC_RETURN_IF_ERROR(AutoOrCount(vm, "vllm.max_model_len", &o->vllm.max_model_len));
  o->vllm.max_num_seqs = vm["vllm.max_num_seqs"].as<int64_t>();
  StoreMasterInputs in;
  in.store_ranks = store_ranks;
  const std::string dram = vm["store.dram"].as<std::string>();
  Result<uint64_t> bytes = ParseBytes(dram);
  if (!bytes.ok() || *bytes == 0) {
    return InvalidArgument(fmt::format("store.dram = '{}': {}", dram,
                                       bytes.ok() ? "must be > 0" : bytes.status().message()));
  }
  in.store_dram = *bytes;
  const std::string scale = vm["kv_scale"].as<std::string>();
  char* end = nullptr;
  in.kv_scale = std::strtod(scale.c_str(), &end);
  if (end == scale.c_str() || *end != '\0' || !(in.kv_scale >= 1e-6 && in.kv_scale <= 1)) {
    return InvalidArgument("kv_scale = '" + scale + "' (allowed: a number from 1e-6 to 1)");
  }
  const int replicas = vm["store.replicas"].as<int>();
  if (replicas < 1 || replicas > 64) {
    return InvalidArgument(fmt::format("store.replicas = {}: allowed 1 to 64", replicas));
  }
  in.replicas = static_cast<uint32_t>(replicas);
  o->store = StoreMasterFor(o->sched, in);
  return Status::Ok();
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
      for (const std::string& a : o) cli::RefusePlaceholders(a);
      po::store(po::command_line_parser(o).options(desc).style(cli::kCommandLineStyle).run(), vm);
    }
    po::store(cli::ParseCommandLine(args, desc), vm);
    if (vm.count("help")) {
      std::ostringstream ss;
      ss << desc << "\nUnits: durations take ns, us, ms, s, min, h. Booleans: true | false.\n";
      *help = ss.str();
      return NotFound("");
    }
    if (vm.count("config")) cli::StoreConfigFile(vm["config"].as<std::string>(), desc, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return InvalidArgument(e.what());
  }
  EvalOptions o;
  if (vm.count("config")) o.config_file = vm["config"].as<std::string>();
  Result<SchedulingSettings> sched = SchedulingFromVariables(vm);
  if (!sched.ok()) return sched.status();
  o.sched = *sched;
  int store_ranks = 0;
  if (const std::string roles = vm["roles"].as<std::string>(); !roles.empty()) {
    auto counts = RoleCountsFromRoles(roles);
    if (!counts.ok()) return counts.status();
    o.sched.scheduler.prefill_instances = counts->prefill;
    o.sched.scheduler.decode_instances = counts->decode;
    store_ranks = counts->store;
  }
  auto system = sim::ParseSystemKind(vm["system"].as<std::string>());
  if (!system.ok()) return system.status();
  o.system = *system;
  o.load_scale = vm["load.scale"].as<double>();
  if (!(o.load_scale > 0) || o.load_scale > 1e6) {
    return InvalidArgument(fmt::format("load.scale = {}: allowed (0, 1e6]", o.load_scale));
  }
  o.out = vm["out"].as<std::string>();
  if (o.out.empty()) o.out = FormatUtcNow("runs/eval-%Y%m%d-%H%M%S");
  o.plots = vm["plots"].as<bool>();
  Result<trace::SyntheticConfig> synthetic = SyntheticFromVariables(vm, o.sched.seed);
  if (!synthetic.ok()) return synthetic.status();
  o.synthetic = *synthetic;
  o.synthetic_write = vm["synthetic.write"].as<std::string>();
  MC_RETURN_IF_ERROR(ReadSimModelOptions(vm, store_ranks, &o));
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
  if (o.system != sim::SystemKind::kMooncake) {
    MC_RETURN_IF_ERROR(sim::EffectiveVllmLimits(check, o.sched.model).status());
  }
  return o;
}

sim::SimConfig ToSimConfig(const EvalOptions& o) {
  sim::SimConfig c;
  c.system = o.system;
  c.scheduler = o.sched.scheduler;
  c.chunk_tokens = o.sched.chunk_tokens;
  c.load_scale = o.load_scale;
  c.thresholds = o.sched.thresholds;
  c.vllm = o.vllm;
  c.store = o.system == sim::SystemKind::kMooncake ? o.store : sim::StoreMasterModel{};
  return c;
}

}  // namespace mooncake::eval
