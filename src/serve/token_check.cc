#include "serve/token_check.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "model/generate.h"
#include "model/trace_tokens.h"

namespace mooncake::serve {

ReferenceTokens::ReferenceTokens(const model::Transformer& model,
                                 const std::vector<trace::TraceRequest>& requests)
    : model_(model),
      requests_(requests),
      expected_(requests.size()),
      errors_(requests.size()),
      thread_([this] { Compute(); }) {}

ReferenceTokens::~ReferenceTokens() {
  if (thread_.joinable()) thread_.join();
}

void ReferenceTokens::Compute() {
  for (size_t i = 0; i < requests_.size(); ++i) {
    const trace::TraceRequest& r = requests_[i];
    auto prompt = model::PromptTokens(r.hash_ids, r.input_length, trace::kTraceBlockTokens,
                                      model_.config().vocab_size);
    if (!prompt.ok()) {
      errors_[i] = prompt.status().ToString();
      continue;
    }
    model::GenerateOptions options;
    options.max_tokens = r.output_length;
    options.block_tokens = trace::kTraceBlockTokens;
    auto g = model::Generate(model_, *prompt, options);
    if (g.ok()) {
      expected_[i] = std::move(g->output_ids);
    } else {
      errors_[i] = g.status().ToString();
    }
  }
}

TokenCheckResult ReferenceTokens::Compare(const std::vector<trace::RequestRecord>& records,
                                          const std::vector<std::vector<int32_t>>& output_ids) {
  if (thread_.joinable()) thread_.join();
  TokenCheckResult result;
  // Online requests (numbered after the workload's) have no reference here.
  for (size_t i = 0; i < records.size() && i < output_ids.size() && i < expected_.size(); ++i) {
    if (records[i].outcome != trace::Outcome::kCompleted) continue;
    const std::vector<int32_t>& got = output_ids[i];
    const std::vector<int32_t>& want = expected_[i];
    ++result.requests_compared;
    if (got == want && errors_[i].empty()) continue;
    ++result.token_mismatches;
    if (!result.first_mismatch.empty()) continue;
    if (!errors_[i].empty()) {
      result.first_mismatch = fmt::format("request {}: no reference: {}", i, errors_[i]);
      continue;
    }
    size_t at = 0;
    while (at < got.size() && at < want.size() && got[at] == want[at]) ++at;
    result.first_mismatch = at < got.size() && at < want.size()
                                ? fmt::format("request {}: token {} is {}, the reference says {}",
                                              i, at, got[at], want[at])
                                : fmt::format("request {}: {} tokens, the reference has {}", i,
                                              got.size(), want.size());
  }
  return result;
}

Status WriteTokens(const std::string& run_dir, const std::vector<trace::TraceRequest>& requests,
                   const std::vector<std::vector<int32_t>>& output_ids) {
  const std::string path = run_dir + "/tokens.jsonl";
  std::ofstream out(path);
  for (size_t i = 0; i < requests.size() && i < output_ids.size(); ++i) {
    if (output_ids[i].empty()) continue;
    const nlohmann::json line = {{"request", requests[i].id.value},
                                 {"input_length", requests[i].input_length},
                                 {"output_ids", output_ids[i]}};
    out << line.dump() << "\n";
  }
  out.flush();
  if (!out) return Status(ErrorCode::kIoError, path + ": cannot write");
  return Status::Ok();
}

}  // namespace mooncake::serve
