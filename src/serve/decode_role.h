// A decode rank: receives each admitted request's KV into its registered receive buffer (slots
// handed out by a SegmentAllocator on KvOffer), verifies every block when KvDone arrives, asks
// the conductor to admit the request (Scheduler::AdmitToDecode), and runs continuous batching:
// each step is one Engine::Decode over the batch (the cost model's step time / time_scale today)
// and gives every request in it one token. A request joins the batch only when its KV fits in
// the modelled HBM (beside the weights): the simulator's batcher (engine/decode_batcher.h), so
// batches grow and shrink as in the simulator. The tokens of requests whose client streams go to
// the conductor as they are generated (DecodeTokens, at a bounded rate); DecodeDone still
// carries every token.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "engine/decode_batcher.h"
#include "serve/messages.h"
#include "serve/serve_context.h"
#include "store/segment_allocator.h"
#include "trace/metrics.h"

namespace mooncake::serve {

struct DecodeStats {
  uint64_t requests = 0, tokens = 0, steps = 0;
  uint64_t blocks_verified = 0, blocks_corrupt = 0, rejected_at_join = 0;
  uint64_t max_batch = 0, errors = 0;
  uint64_t waiting_high_water = 0;  // the most requests waiting to join the batch at once
  uint64_t peer_loss_aborts = 0;    // work dropped because a peer was declared dead
  std::string first_error;
};

class DecodeRole {
 public:
  // `buffer` is this rank's registered receive buffer (exported at bootstrap as region 0).
  DecodeRole(ServeContext& ctx, std::span<std::byte> buffer);
  ~DecodeRole();
  void Start();
  void Stop();
  DecodeStats stats() const;

 private:
  // A request's own state beside the lengths the batcher accounts with.
  struct Active {
    uint64_t request;
    uint32_t attempt;
    Nanos last_token;  // local clock
    trace::TbtAccumulator tbt;
    std::vector<int32_t> output_ids;  // from an engine that computes tokens; else empty
    bool stream = false;              // its client streams: DecodeTokens as they come
    size_t reported = 0;              // output_ids the conductor has (PrefillDone, DecodeTokens)
  };
  void WorkLoop();
  void Arrive(const KvDone& kv);
  void Step();
  void Fail(const Status& s);
  // An Info line of how long requests' KV took to be complete here (KvDone's arrival) after
  // their prefill started and after it ended (the first token): what streaming layers shortens.
  void LogKvTimes() const;

  ServeContext& ctx_;
  std::span<std::byte> buffer_;
  // A slot and the offer it answered (prefill rank, request, attempt): the prefill asks again
  // when an answer is late (rpc_timeout), and the same offer gets the same slot.
  struct Slot {
    store::Allocation allocation;
    int32_t prefill = -1;
    uint64_t request = 0;
    uint32_t attempt = 0;
  };
  // The slot already given to this offer, or null. Caller holds mutex_.
  const Slot* FindOffered(Rank from, const KvOffer& offer) const;
  store::SegmentAllocator slots_;
  std::unordered_map<uint64_t, Slot> slot_of_;  // offset -> slot (under mutex_)

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<KvDone> arrivals_;
  bool stopping_ = false;
  DecodeStats stats_;
  // Per request, ns of the conductor's clock: KvDone's arrival - prefill start, - first token.
  std::vector<int64_t> kv_after_start_, kv_after_first_token_;

  // Owned by the worker thread.
  engine::DecodeBatcher<Active> batcher_;
  std::vector<engine::DecodeSeq> step_;  // the batch as the engine sees it, reused every step
  Nanos next_step_{0};
  Nanos next_report_{0};  // the earliest time of the next DecodeTokens
  std::thread worker_;
};

}  // namespace mooncake::serve
