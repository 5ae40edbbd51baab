// Seeded synthetic workloads in the Mooncake trace format.
//
// Prefix-sharing model: every request starts with one of `system_prompts` shared prompts
// (picked with a Zipf-like skew), and belongs to a multi-turn session: a follow-up turn repeats
// the whole previous prompt of its session (all of its full blocks keep their ids) and appends
// new tokens. Ids obey the trace rule: two requests share id k at position i only if their
// prompts agree up to and including block i. Arrivals are Poisson at `rate_per_s`.
// The same config (including seed) always gives the same requests.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "trace/trace_request.h"

namespace mooncake::trace {

struct SyntheticConfig {
  uint64_t seed = 1;
  int num_requests = 300;
  double rate_per_s = 2.0;            // Poisson arrival rate
  int system_prompts = 8;             // shared system prompts
  int system_prompt_blocks = 4;       // full 512-token blocks per system prompt
  double zipf_s = 1.0;                // skew of system prompt popularity
  double followup_probability = 0.5;  // chance a request continues an open session
  int max_open_sessions = 64;         // sessions kept open for follow-ups
  double mean_new_tokens = 2000;      // mean appended tokens per turn (exponential)
  int max_input_tokens = 32768;       // a session that would exceed this starts over
  double mean_output_tokens = 200;    // mean output (exponential, at least 1)
};

Status ValidateSyntheticConfig(const SyntheticConfig& config);
std::vector<TraceRequest> GenerateSynthetic(const SyntheticConfig& config);

}  // namespace mooncake::trace
