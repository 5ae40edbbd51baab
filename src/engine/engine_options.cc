#include "engine/engine_options.h"

#include <fmt/format.h>

#include "common/cli/option_table.h"
#include "common/cli/option_values.h"

namespace mooncake::engine {

namespace po = boost::program_options;

po::options_description EngineOptionsDescription(RawEngineOptions* raw) {
  po::options_description d("Engine (serve: what computes the KV and the tokens)");
  cli::AddOptionRows(
      d,
      {{"engine.kind", cli::Text(&raw->kind, "cost"),
        "cost: ranks take the cost model's time and move KV bytes derived from each block's "
        "hash id; reference: the reference transformer computes real KV and tokens, in real time "
        "(needs --time_scale 1)"},
       {"engine.model", cli::Text(&raw->model, "tiny"),
        "reference engine: a preset (tiny, mini, small) or a Hugging Face LLaMA checkpoint "
        "folder, as mooncake generate --model"},
       {"engine.seed", cli::Number<uint64_t>(&raw->seed, 0),
        "reference engine: the seed of a preset's weights (as mooncake generate --seed)"},
       {"engine.device", cli::Text(&raw->device, "cpu"),
        "reference engine: where prefill and decode ranks compute, cpu or cuda (GPU 0 of the "
        "rank's node, through CUDA_VISIBLE_DEVICES; the KV blocks are the same layout)"},
       {"engine.max_output", cli::Number<int64_t>(&raw->max_output, 32),
        "reference engine: output tokens per request at most (each request's output_length is "
        "capped to it; 0 = no cap, up to 100000)"},
       {"engine.check_tokens", cli::Text(&raw->check_tokens, "on"),
        "reference engine, on: the conductor computes each request's tokens in one process (as "
        "mooncake generate) and summary.json counts token_mismatches; off"},
       {"engine.kv_stream", cli::Text(&raw->kv_stream, "layer"),
        "reference engine: layer (a prefill rank sends each layer's KV of a chunk's finished "
        "blocks to the decode rank as soon as it is computed) or chunk (the blocks once the "
        "chunk is computed)"},
       {"fault.swap_kv", cli::Text(&raw->swap_kv, "off"),
        "test hook, on: a prefill rank swaps the KV of two blocks of one request after their "
        "checksums were taken; the run must report it and exit non-zero"}});
  return d;
}

void AddReferenceModelOptions(po::options_description& d, const char* model_help) {
  cli::AddOptionRows(
      d, {cli::HelpRow(),
          {"model", po::value<std::string>(), model_help},
          {"seed", po::value<uint64_t>()->default_value(0), "seed of a preset's weights"}});
}

Status ConvertEngineOptions(const RawEngineOptions& raw, double time_scale, EngineOptions* out) {
  MC_RETURN_IF_ERROR(cli::ChoiceOption("engine.kind", raw.kind,
                                       {{"cost", false}, {"reference", true}}, &out->reference));
  if (raw.model.empty()) return InvalidArgument("engine.model = '' (a preset or a folder)");
  out->model = raw.model;
  out->seed = raw.seed;
  MC_RETURN_IF_ERROR(
      cli::ChoiceOption("engine.device", raw.device, {{"cpu", false}, {"cuda", true}}, &out->cuda));
  if (out->cuda && !out->reference) {
    return InvalidArgument("engine.device = cuda needs engine.kind = reference");
  }
  MC_RETURN_IF_ERROR(
      cli::IntOption<int64_t>("engine.max_output", raw.max_output, 0, 100000, &out->max_output));
  MC_RETURN_IF_ERROR(cli::OnOffOption("engine.check_tokens", raw.check_tokens, &out->check_tokens));
  MC_RETURN_IF_ERROR(cli::OnOffOption("fault.swap_kv", raw.swap_kv, &out->fault_swap_kv));
  MC_RETURN_IF_ERROR(cli::ChoiceOption("engine.kv_stream", raw.kv_stream,
                                       {{"layer", true}, {"chunk", false}},
                                       &out->kv_stream_layers));
  if (out->reference && time_scale != 1.0) {
    return InvalidArgument(
        fmt::format("engine.kind = reference computes in real time: time_scale must be 1, not {} "
                    "(load.scale speeds up the arrivals instead)",
                    time_scale));
  }
  return Status::Ok();
}

}  // namespace mooncake::engine
