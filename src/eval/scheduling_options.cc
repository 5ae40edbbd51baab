#include "eval/scheduling_options.h"

#include <fmt/format.h>

#include <cctype>
#include <sstream>

#include "common/units.h"

namespace mooncake::eval {

namespace po = boost::program_options;

void AddSchedulingOptions(po::options_description& desc, const std::string& presets_dir_default) {
  po::options_description model("Model and cluster");
  model.add_options()("model.preset", po::value<std::string>()->default_value("llama3-70b"),
                      "model preset name (configs/models/<name>.ini) or path to an .ini")(
      "hardware.preset", po::value<std::string>()->default_value("a800x8"),
      "hardware preset of one instance (configs/hardware/<name>.ini) or path")(
      "presets.dir", po::value<std::string>()->default_value(presets_dir_default),
      "folder holding models/ and hardware/")(
      "cluster.prefill", po::value<int>()->default_value(8),
      "prefill instances (for vllm* systems: the number of colocated instances)")(
      "cluster.decode", po::value<int>()->default_value(8), "decode instances");
  po::options_description cond("Conductor");
  cond.add_options()("conductor.policy", po::value<std::string>()->default_value("kvcache_centric"),
                     "prefill selection: random | load_balance | cache_aware | kvcache_centric")(
      "conductor.balancing_threshold", po::value<double>()->default_value(1.5),
      "kvcache_centric fetches a remote prefix when best/local > this (>= 1)")(
      "conductor.early_rejection", po::value<std::string>()->default_value("predicted"),
      "decode-load check at arrival: off | current | predicted")(
      "conductor.admission", po::value<bool>()->default_value(true),
      "reject requests whose predicted TTFT/TBT breaks the SLO (true | false)")(
      "conductor.assumed_decode_time", po::value<std::string>()->default_value("10s"),
      "decode time assumed by the load forecast until decodes are observed");
  po::options_description slo("SLO");
  slo.add_options()("slo.ttft", po::value<std::string>()->default_value("30s"),
                    "TTFT SLO (admission and capacity)")(
      "slo.tbt", po::value<std::string>()->default_value("100ms"), "TBT SLO used by admission")(
      "slo.report_tbt", po::value<std::string>()->default_value("100ms,200ms,300ms"),
      "TBT thresholds at which effective request capacity is reported");
  po::options_description store("Store and prefill");
  store.add_options()(
      "store.capacity_blocks", po::value<std::string>()->default_value("auto"),
      "KV cache per prefill instance in 512-token blocks: N | auto (hardware DRAM) | unbounded")(
      "store.global_pool", po::value<bool>()->default_value(false),
      "one global LRU pool of store.capacity_blocks instead of per-instance caches")(
      "prefill.chunk_tokens", po::value<int64_t>()->default_value(0),
      "prefill chunk (tokens; 0 = one pass); vllm_chunked: token budget per step");
  po::options_description tr("Trace");
  tr.add_options()("trace", po::value<std::string>()->default_value(""),
                   "Mooncake JSONL trace (empty: a seeded synthetic workload)")(
      "trace.limit", po::value<int64_t>()->default_value(0), "requests to replay (0 = all)")(
      "trace.offset", po::value<int64_t>()->default_value(0), "valid requests to skip first")(
      "trace.skip_invalid", po::value<bool>()->default_value(false)->implicit_value(true),
      "count and skip malformed lines instead of failing")(
      "load.scale", po::value<double>()->default_value(1.0),
      "divide arrival times by this (2 = twice the request rate; 10 = overload)")(
      "time_scale", po::value<double>()->default_value(1.0),
      "live runs: wall time = model time / time_scale (the simulator runs in model time)")(
      "seed", po::value<int64_t>()->default_value(1), "seed of random choices and workloads");
  desc.add(model).add(cond).add(slo).add(store).add(tr);
}

namespace {

// Counts are read as signed: Boost reads "-1" into an unsigned as 2^64 - 1, which made
// `--trace.limit -1` mean "all requests" without a word.
template <typename Out>
Status NonNegative(const po::variables_map& vm, const char* key, Out* out) {
  const int64_t v = vm[key].as<int64_t>();
  if (v < 0) return InvalidArgument(fmt::format("{} = {}: must be >= 0", key, v));
  *out = static_cast<Out>(v);
  return Status::Ok();
}

Result<Nanos> DurationOpt(const po::variables_map& vm, const char* key) {
  const std::string text = vm[key].as<std::string>();
  Result<Nanos> d = ParseDuration(text);
  if (!d.ok())
    return InvalidArgument(fmt::format("{} = '{}': {}", key, text, d.status().message()));
  if (*d <= Nanos(0)) return InvalidArgument(fmt::format("{} = '{}': must be > 0", key, text));
  return d;
}

}  // namespace

Result<SchedulingSettings> SchedulingFromVariables(const po::variables_map& vm) {
  SchedulingSettings s;
  const std::string dir = vm["presets.dir"].as<std::string>();
  auto model = engine::LoadModelPreset(dir + "/models", vm["model.preset"].as<std::string>());
  if (!model.ok()) return model.status().WithContext("model.preset");
  auto hw = engine::LoadHardwarePreset(dir + "/hardware", vm["hardware.preset"].as<std::string>());
  if (!hw.ok()) return hw.status().WithContext("hardware.preset");
  s.model = *model;
  s.hardware = *hw;
  conductor::SchedulerConfig& c = s.scheduler;
  c.prefill_instances = vm["cluster.prefill"].as<int>();
  c.decode_instances = vm["cluster.decode"].as<int>();
  if (c.prefill_instances < 1 || c.prefill_instances > 4096) {
    return InvalidArgument(
        fmt::format("cluster.prefill = {}: allowed 1 to 4096", c.prefill_instances));
  }
  if (c.decode_instances < 1 || c.decode_instances > 4096) {
    return InvalidArgument(
        fmt::format("cluster.decode = {}: allowed 1 to 4096", c.decode_instances));
  }
  auto policy = conductor::ParsePrefillPolicy(vm["conductor.policy"].as<std::string>());
  if (!policy.ok()) return policy.status();
  c.policy = *policy;
  c.balancing_threshold = vm["conductor.balancing_threshold"].as<double>();
  auto early = conductor::ParseEarlyRejection(vm["conductor.early_rejection"].as<std::string>());
  if (!early.ok()) return early.status();
  c.early_rejection = *early;
  c.admission = vm["conductor.admission"].as<bool>();
  auto td = DurationOpt(vm, "conductor.assumed_decode_time");
  if (!td.ok()) return td.status();
  c.assumed_decode_time = *td;
  auto ttft = DurationOpt(vm, "slo.ttft");
  if (!ttft.ok()) return ttft.status();
  auto tbt = DurationOpt(vm, "slo.tbt");
  if (!tbt.ok()) return tbt.status();
  c.ttft_slo = *ttft;
  c.tbt_slo = *tbt;
  s.thresholds.ttft_s = engine::NanosToSeconds(*ttft);
  s.thresholds.tbt_s.clear();
  std::stringstream list(vm["slo.report_tbt"].as<std::string>());
  for (std::string item; std::getline(list, item, ',');) {
    Result<Nanos> d = ParseDuration(item);
    if (!d.ok()) return InvalidArgument("slo.report_tbt: " + d.status().message());
    s.thresholds.tbt_s.push_back(engine::NanosToSeconds(*d));
  }
  if (s.thresholds.tbt_s.empty())
    return InvalidArgument("slo.report_tbt: needs at least one value");
  const std::string cap = vm["store.capacity_blocks"].as<std::string>();
  const uint64_t block_bytes = engine::CostModel(s.model, s.hardware).KvBytesPerBlock();
  if (cap == "auto") {
    c.cache_capacity_blocks = std::max<uint64_t>(1, s.hardware.dram_bytes / block_bytes);
  } else if (cap == "unbounded") {
    c.cache_capacity_blocks = 0;
  } else {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(cap.c_str(), &end, 10);
    if (cap.empty() || *end != '\0' || v == 0) {
      return InvalidArgument(fmt::format(
          "store.capacity_blocks = '{}': expected a block count >= 1, auto or unbounded", cap));
    }
    c.cache_capacity_blocks = v;
  }
  c.shared_pool = vm["store.global_pool"].as<bool>();
  s.chunk_tokens = vm["prefill.chunk_tokens"].as<int64_t>();
  if (s.chunk_tokens < 0) {
    return InvalidArgument(fmt::format("prefill.chunk_tokens = {}: must be >= 0", s.chunk_tokens));
  }
  c.prefill_chunk_tokens = s.chunk_tokens;
  s.trace_path = vm["trace"].as<std::string>();
  MC_RETURN_IF_ERROR(NonNegative(vm, "trace.limit", &s.trace_read.limit));
  MC_RETURN_IF_ERROR(NonNegative(vm, "trace.offset", &s.trace_read.offset));
  s.trace_read.skip_invalid = vm["trace.skip_invalid"].as<bool>();
  s.time_scale = vm["time_scale"].as<double>();
  if (!(s.time_scale > 0)) return InvalidArgument("time_scale: must be > 0");
  MC_RETURN_IF_ERROR(NonNegative(vm, "seed", &s.seed));
  c.seed = s.seed;
  MC_RETURN_IF_ERROR(conductor::ValidateSchedulerConfig(c));
  return s;
}

void AddSyntheticOptions(po::options_description& syn) {
  syn.add_options()("synthetic.requests", po::value<int>()->default_value(300), "requests")(
      "synthetic.rate", po::value<double>()->default_value(2.0), "Poisson arrivals per second")(
      "synthetic.system_prompts", po::value<int>()->default_value(8), "shared system prompts")(
      "synthetic.prompt_blocks", po::value<int>()->default_value(4),
      "512-token blocks per system prompt")("synthetic.followup",
                                            po::value<double>()->default_value(0.5),
                                            "probability that a request continues an open session")(
      "synthetic.new_tokens", po::value<double>()->default_value(2000),
      "mean new prompt tokens per turn")(
      "synthetic.output_tokens", po::value<double>()->default_value(200), "mean output tokens")(
      "synthetic.max_input", po::value<int>()->default_value(32768), "longest prompt (tokens)");
}

Result<trace::SyntheticConfig> SyntheticFromVariables(const po::variables_map& vm, uint64_t seed) {
  trace::SyntheticConfig s;
  s.seed = seed;
  s.num_requests = vm["synthetic.requests"].as<int>();
  s.rate_per_s = vm["synthetic.rate"].as<double>();
  s.system_prompts = vm["synthetic.system_prompts"].as<int>();
  s.system_prompt_blocks = vm["synthetic.prompt_blocks"].as<int>();
  s.followup_probability = vm["synthetic.followup"].as<double>();
  s.mean_new_tokens = vm["synthetic.new_tokens"].as<double>();
  s.mean_output_tokens = vm["synthetic.output_tokens"].as<double>();
  s.max_input_tokens = vm["synthetic.max_input"].as<int>();
  MC_RETURN_IF_ERROR(trace::ValidateSyntheticConfig(s));
  return s;
}

}  // namespace mooncake::eval
