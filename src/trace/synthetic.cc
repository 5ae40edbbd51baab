#include "trace/synthetic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace mooncake::trace {
namespace {

// Portable draws (std distributions differ between standard libraries; these do not).
double Uniform01(std::mt19937_64& rng) { return (rng() >> 11) * (1.0 / 9007199254740992.0); }
double Exponential(std::mt19937_64& rng, double mean) {
  return -mean * std::log(1.0 - Uniform01(rng));
}

struct Session {
  std::vector<BlockHash> ids;  // ids of the previous prompt
  int32_t tokens = 0;          // its input length
};

}  // namespace

Status ValidateSyntheticConfig(const SyntheticConfig& c) {
  if (c.num_requests < 0) return InvalidArgument("synthetic.requests: must be >= 0");
  if (!(c.rate_per_s > 0)) return InvalidArgument("synthetic.rate: must be > 0");
  if (c.system_prompts < 1) return InvalidArgument("synthetic.system_prompts: must be >= 1");
  if (c.system_prompt_blocks < 0)
    return InvalidArgument("synthetic.system_prompt_blocks: must be >= 0");
  if (c.followup_probability < 0 || c.followup_probability > 1) {
    return InvalidArgument("synthetic.followup_probability: must be in [0, 1]");
  }
  if (c.max_open_sessions < 1) return InvalidArgument("synthetic.max_open_sessions: must be >= 1");
  if (!(c.mean_new_tokens >= 1)) return InvalidArgument("synthetic.mean_new_tokens: must be >= 1");
  if (c.max_input_tokens < kTraceBlockTokens) {
    return InvalidArgument(
        fmt::format("synthetic.max_input_tokens: must be >= {}", kTraceBlockTokens));
  }
  if (!(c.mean_output_tokens >= 1))
    return InvalidArgument("synthetic.mean_output_tokens: must be >= 1");
  return Status::Ok();
}

std::vector<TraceRequest> GenerateSynthetic(const SyntheticConfig& c) {
  std::mt19937_64 rng(c.seed);
  uint64_t next_id = 0;
  // System prompts own the first ids.
  std::vector<std::vector<BlockHash>> prompts(c.system_prompts);
  for (auto& p : prompts) {
    for (int b = 0; b < c.system_prompt_blocks; ++b) p.push_back(BlockHash{next_id++});
  }
  std::vector<double> zipf_cdf(c.system_prompts);
  double total = 0;
  for (int i = 0; i < c.system_prompts; ++i) {
    total += 1.0 / std::pow(i + 1, c.zipf_s);
    zipf_cdf[i] = total;
  }
  std::vector<Session> sessions;
  std::vector<TraceRequest> out;
  out.reserve(c.num_requests);
  double t_s = 0;
  for (int n = 0; n < c.num_requests; ++n) {
    t_s += Exponential(rng, 1.0 / c.rate_per_s);
    const double u_follow = Uniform01(rng);
    const double u_pick = Uniform01(rng);
    const auto new_tokens =
        static_cast<int32_t>(std::max(1.0, std::round(Exponential(rng, c.mean_new_tokens))));
    const auto output =
        static_cast<int32_t>(std::max(1.0, std::round(Exponential(rng, c.mean_output_tokens))));
    Session base;
    size_t session_slot = sessions.size();
    if (!sessions.empty() && u_follow < c.followup_probability) {
      session_slot = static_cast<size_t>(u_pick * sessions.size());
      base = sessions[session_slot];
      if (base.tokens + new_tokens > c.max_input_tokens) session_slot = sessions.size();
    }
    if (session_slot == sessions.size()) {
      const double target = u_pick * total;
      const size_t k =
          std::lower_bound(zipf_cdf.begin(), zipf_cdf.end(), target) - zipf_cdf.begin();
      base.ids = prompts[std::min<size_t>(k, prompts.size() - 1)];
      base.tokens = static_cast<int32_t>(base.ids.size()) * kTraceBlockTokens;
    }
    TraceRequest r;
    r.id = RequestId{static_cast<uint64_t>(n)};
    r.timestamp_ms = static_cast<int64_t>(std::floor(t_s * 1000.0));
    r.input_length = std::min(base.tokens + new_tokens, c.max_input_tokens);
    r.output_length = output;
    // Keep only the full blocks of the base: a partial last block changes with new text.
    const size_t keep = std::min<size_t>(base.tokens / kTraceBlockTokens, base.ids.size());
    r.hash_ids.assign(base.ids.begin(), base.ids.begin() + keep);
    const size_t want = (r.input_length + kTraceBlockTokens - 1) / kTraceBlockTokens;
    r.hash_ids.resize(std::min(r.hash_ids.size(), want));
    while (r.hash_ids.size() < want) r.hash_ids.push_back(BlockHash{next_id++});
    Session next{r.hash_ids, r.input_length};
    if (session_slot < sessions.size()) {
      sessions[session_slot] = std::move(next);
    } else if (static_cast<int>(sessions.size()) < c.max_open_sessions) {
      sessions.push_back(std::move(next));
    } else {
      sessions[static_cast<size_t>(u_follow * sessions.size())] = std::move(next);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace mooncake::trace
