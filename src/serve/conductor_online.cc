// ConductorRole's online requests (HTTP completions, serve_http.h): Submit decides a client's
// request at once and dispatches it as a replayed one; Await and AwaitTokens are the endpoint's
// waits for its outcome and its streamed tokens; AllRequests lists both kinds after Run.
#include "serve/conductor_role.h"

#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "engine/cost_model.h"

namespace mooncake::serve {

std::vector<trace::TraceRequest> ConductorRole::AllRequests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<trace::TraceRequest> all(requests_.begin(), requests_.end());
  all.insert(all.end(), online_.begin(), online_.end());
  return all;
}

Result<uint64_t> ConductorRole::Submit(std::vector<int32_t> prompt_ids, int32_t max_tokens,
                                       std::vector<BlockHash> hash_ids, bool stream) {
  std::optional<PrefillTask> task;
  uint64_t id = 0;
  int prefill = 0;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // A request that comes between the endpoint's start and the replay's waits for the latter.
    cv_.wait_for(lock, std::chrono::seconds(30),
                 [&] { return accepting_ || stop_requested_ || serving_over_; });
    if (!accepting_) {
      return Status(ErrorCode::kBusy, stop_requested_ || serving_over_
                                          ? "the job is stopping"
                                          : "the job is not serving yet");
    }
    id = pending_.size();
    trace::TraceRequest t;
    t.id = RequestId{id};
    const Nanos arrival_model = ModelNow();
    t.timestamp_ms = std::chrono::duration_cast<std::chrono::milliseconds>(arrival_model).count();
    t.input_length = static_cast<int32_t>(prompt_ids.size());
    t.output_length = max_tokens;
    t.hash_ids = std::move(hash_ids);
    t.prompt_ids = std::move(prompt_ids);
    trace::RequestRecord r;
    r.id = t.id;
    r.arrival_s = engine::NanosToSeconds(arrival_model);
    r.input_tokens = t.input_length;
    r.output_tokens = t.output_length;
    r.blocks = static_cast<int32_t>(t.hash_ids.size());
    r.outcome = trace::Outcome::kLost;
    online_.push_back(std::move(t));
    records_.push_back(r);
    output_ids_.emplace_back();
    pending_.emplace_back();
    pending_.back().stream = stream;
    task = DecideLocked(id, arrival_model);
    if (task) prefill = pending_[id].decision.prefill;
  }
  if (task) Dispatch(*task, prefill);
  return id;
}

ConductorRole::OnlineResult ConductorRole::Await(uint64_t id, Nanos timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  OnlineResult out;
  if (id >= pending_.size()) return out;
  cv_.wait_for(lock, timeout, [&] { return pending_[id].resolved || run_over_; });
  out.resolved = pending_[id].resolved || run_over_;
  out.record = records_[id];
  out.output_ids = output_ids_[id];
  return out;
}

ConductorRole::OnlineResult ConductorRole::AwaitTokens(uint64_t id, size_t have, Nanos timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  OnlineResult out;
  if (id >= pending_.size()) return out;
  // pending_ may grow (Submit) while this waits: it is indexed anew each time.
  cv_.wait_for(lock, timeout, [&] {
    return pending_[id].resolved || run_over_ || pending_[id].streamed.size() > have;
  });
  const Pending& p = pending_[id];
  out.resolved = p.resolved || run_over_;
  const std::vector<int32_t>& tokens = p.resolved ? output_ids_[id] : p.streamed;
  if (tokens.size() > have) out.output_ids.assign(tokens.begin() + have, tokens.end());
  if (out.resolved) out.record = records_[id];
  return out;
}

}  // namespace mooncake::serve
