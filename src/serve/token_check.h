// Token identity of a run with the reference engine (docs/MODEL.md): every request's tokens are
// computed again in one process, with no cache and no disaggregation, exactly as
// `mooncake generate` does; the run's tokens must equal them. The reference runs on a
// background thread of the conductor while the job replays, so the comparison at the end costs
// little wall time.
#pragma once

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "model/transformer.h"
#include "trace/metrics.h"
#include "trace/trace_request.h"

namespace mooncake::serve {

struct TokenCheckResult {
  uint64_t requests_compared = 0;  // completed requests with tokens
  uint64_t token_mismatches = 0;   // of those, requests whose tokens differ from the reference
  std::string first_mismatch;      // "request 7: token 3 is 211, the reference says 40"
};

class ReferenceTokens {
 public:
  // Starts computing at once. `model` and `requests` must outlive the object.
  ReferenceTokens(const model::Transformer& model,
                  const std::vector<trace::TraceRequest>& requests);
  ~ReferenceTokens();
  ReferenceTokens(const ReferenceTokens&) = delete;
  ReferenceTokens& operator=(const ReferenceTokens&) = delete;

  // Waits for the reference, then compares each completed request's `output_ids` (by request
  // id) with it.
  TokenCheckResult Compare(const std::vector<trace::RequestRecord>& records,
                           const std::vector<std::vector<int32_t>>& output_ids);

 private:
  void Compute();

  const model::Transformer& model_;
  const std::vector<trace::TraceRequest>& requests_;
  std::vector<std::vector<int32_t>> expected_;
  std::vector<std::string> errors_;  // a request the reference could not compute
  std::thread thread_;
};

// <run_dir>/tokens.jsonl: one line per request that has tokens, in mooncake generate's format
// ({"request": id, "input_length": n, "output_ids": [...]}).
Status WriteTokens(const std::string& run_dir, const std::vector<trace::TraceRequest>& requests,
                   const std::vector<std::vector<int32_t>>& output_ids);

}  // namespace mooncake::serve
