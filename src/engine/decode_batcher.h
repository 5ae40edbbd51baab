// Continuous batching of one decode instance, the one copy that the simulator (src/sim) and the
// live decode role (src/serve) both run, so that the two keep the same batches: a request waits
// in arrival order until its KV fits in HBM beside the weights, then gets one token per step
// until its output is complete, and leaves the batch at once.
//
// HBM is reserved for a request's whole sequence (input + output tokens) when it joins, so a
// running request is never preempted; one larger than HBM runs alone rather than waiting forever.
// A step's cost depends on batch_size() and context_tokens() (the KV the batch attends over).
//
// `Payload` is the caller's per-request state (an index into the simulator's requests, the
// decode role's clock and TBT); the batcher owns the lengths it accounts with. Not thread-safe:
// one owner (the simulator's loop, the decode role's worker thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <utility>
#include <vector>

namespace mooncake::engine {

template <typename Payload>
class DecodeBatcher {
 public:
  struct Seq {
    Payload payload;
    int64_t input_length = 0;
    int64_t output_length = 0;
    int64_t generated = 0;  // output tokens so far (the prefill's first token included)
    int64_t Need() const { return input_length + output_length; }
    int64_t Context() const { return input_length + generated; }
  };

  // `hbm_kv_tokens`: KV tokens that fit beside the weights (CostModel::HbmKvTokenCapacity).
  explicit DecodeBatcher(int64_t hbm_kv_tokens) : hbm_kv_tokens_(hbm_kv_tokens) {}

  // A request whose KV arrived: it waits until AdmitWaiting finds room for it.
  void Enqueue(Seq seq) { waiting_.push_back(std::move(seq)); }

  // Moves waiting requests into the batch, first come first served, while their sequences fit
  // in HBM (a request larger than HBM joins an empty batch).
  void AdmitWaiting() {
    while (!waiting_.empty()) {
      const int64_t need = waiting_.front().Need();
      if (!batch_.empty() && reserved_tokens_ + need > hbm_kv_tokens_) break;
      reserved_tokens_ += need;
      context_tokens_ += waiting_.front().Context();
      batch_.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
    }
  }

  // Colocated instances (the vLLM baselines) admit by their own rules while the prompt is
  // prefilled: they reserve HBM then (Reserve), give it back for a request that ends at its
  // first token (Release), and join the batch with HBM already reserved (JoinReserved).
  void Reserve(int64_t tokens) { reserved_tokens_ += tokens; }
  void Release(int64_t tokens) { reserved_tokens_ -= tokens; }
  void JoinReserved(Seq seq) {
    context_tokens_ += seq.Context();
    batch_.push_back(std::move(seq));
  }

  // One decode step has ended: every request of the batch got one token. Calls
  // `on_token(seq, finished)` for each, in the order they joined (with the counters already
  // updated); a finished request has left the batch when Advance returns.
  template <typename OnToken>
  void Advance(OnToken&& on_token) {
    size_t keep = 0;
    for (size_t k = 0; k < batch_.size(); ++k) {
      Seq& s = batch_[k];
      ++s.generated;
      ++context_tokens_;
      const bool finished = s.generated >= s.output_length;
      if (finished) {
        reserved_tokens_ -= s.Need();
        context_tokens_ -= s.Context();
      }
      on_token(s, finished);
      if (!finished) {
        // Never onto itself: a payload moved onto itself may be left empty (a std::vector
        // is), which once cleared the live decode role's TBT gaps every step.
        if (keep != k) batch_[keep] = std::move(s);
        ++keep;
      }
    }
    batch_.erase(batch_.begin() + static_cast<std::ptrdiff_t>(keep), batch_.end());
  }

  std::span<const Seq> batch() const { return batch_; }
  size_t batch_size() const { return batch_.size(); }
  bool batch_empty() const { return batch_.empty(); }
  size_t waiting_size() const { return waiting_.size(); }
  bool waiting_empty() const { return waiting_.empty(); }
  int64_t reserved_tokens() const { return reserved_tokens_; }  // input + output, admitted
  int64_t context_tokens() const { return context_tokens_; }    // input + generated, batch

 private:
  int64_t hbm_kv_tokens_;
  std::deque<Seq> waiting_;
  std::vector<Seq> batch_;
  int64_t reserved_tokens_ = 0;
  int64_t context_tokens_ = 0;
};

}  // namespace mooncake::engine
