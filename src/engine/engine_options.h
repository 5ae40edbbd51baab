// The serving job's engine options (engine.*) and the KV fault hook (fault.swap_kv): which
// compute the prefill and decode ranks run (docs/MODEL.md "The serving job with the reference
// engine").
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace mooncake::engine {

struct EngineOptions {
  // engine.kind: cost (the cost model's time, KV bytes from hash ids) or reference (the
  // reference transformer computes the KV and the tokens, in real time).
  bool reference = false;
  std::string model = "tiny";  // engine.model: a preset or a checkpoint folder
  uint64_t seed = 0;           // engine.seed: a preset's weights (as mooncake generate --seed)
  bool cuda = false;           // engine.device: cpu, or cuda (the transformer on GPU 0)
  int64_t max_output = 32;     // engine.max_output: output lengths capped to it (0: none)
  bool check_tokens = true;    // engine.check_tokens: compare with mooncake generate's output
  bool fault_swap_kv = false;  // fault.swap_kv: a prefill rank swaps two blocks' KV on purpose
  // engine.kv_stream: layer (each layer's KV to the decode rank as it is computed) or chunk.
  bool kv_stream_layers = true;
};

// The option strings as parsed, converted by ConvertEngineOptions.
struct RawEngineOptions {
  std::string kind, model, device, check_tokens, swap_kv, kv_stream = "layer";
  uint64_t seed = 0;
  int64_t max_output = 32;
};

boost::program_options::options_description EngineOptionsDescription(RawEngineOptions* raw);

// --help, --model (with `model_help`) and --seed: the first rows of `mooncake generate` and
// `mooncake calibrate`, which both load the reference model.
void AddReferenceModelOptions(boost::program_options::options_description& d,
                              const char* model_help);

// Errors name the option. `time_scale`: the reference engine computes in real time, so the job
// must replay at time scale 1.
Status ConvertEngineOptions(const RawEngineOptions& raw, double time_scale, EngineOptions* out);

}  // namespace mooncake::engine
