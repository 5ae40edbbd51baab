// The compute of one serving instance behind one seam, so the live roles (src/serve) do not care
// whether KV is modelled or computed: today's CostModelEngine writes bytes of the right size
// (engine/kv_layout.h) and predicts the time from the cost model; a transformer engine computes
// the KV and the next tokens and measures its time.
//
// Threads: AllocateKv may be called from any thread (a prefill rank's loader allocates while its
// worker computes); Prefill and Decode from one thread at a time (the role's worker thread).
// Prefill and Decode do not return a Status: an engine that cannot compute (a bad block read
// back, a device error) reports it through the result's `error` and the role fails the request.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "engine/kv_memory.h"

namespace mooncake::engine {

// What a call took, in model time (the modelled cluster's time; a live run maps it to wall time
// by time_scale).
struct EngineTime {
  Nanos model{0};
  // true: the engine only predicted the time and returned at once; the caller lets it pass on
  // its own clock, so a live run is timed by the model. false: the call itself took that long
  // (measured); the caller waits no more.
  bool modelled = true;
};

// A chunk of a prompt to prefill: `tokens` new tokens after the first `prefix_tokens`, whose KV
// is already in `kv` (a cached prefix read from the store, or the prompt's earlier chunks).
struct PrefillChunk {
  uint64_t request = 0;                // an engine that keeps a prompt's state between chunks
  std::span<const uint64_t> hash_ids;  // the prompt's blocks (trace hash ids), in order
  int64_t input_length = 0;            // the prompt's tokens
  int64_t prefix_tokens = 0;
  int64_t tokens = 0;
  // Blocks [first_block, end_block) are complete once the chunk is computed: the engine writes
  // their KV into `kv`, block b at b * block_bytes().
  int first_block = 0;
  int end_block = 0;
  std::span<std::byte> kv;  // the prompt's KV, memory from AllocateKv
  // The prompt's tokens when a client gave them (HTTP); empty: derived from hash_ids.
  std::span<const int32_t> prompt_ids;
  // Optional: an engine that computes layer by layer (the reference engine) calls it once per
  // layer, in order, as soon as that layer's KV of blocks [first_block, end_block) is in `kv`
  // (block b's layer l: block_bytes() / layers bytes at b * block_bytes() + l x that), before
  // the later layers are computed, and does not write those blocks again. One that writes whole
  // blocks when the chunk is done (the cost model) never calls it.
  std::function<void(int32_t layer)> on_layer;
};

// One sequence of a decode step's batch.
struct DecodeSeq {
  uint64_t request = 0;
  int64_t context_tokens = 0;  // the KV it attends over: input + tokens generated so far
};

inline constexpr int32_t kNoToken = -1;  // a next token from an engine that models only time

struct PrefillResult {
  EngineTime time;
  // The prompt's first generated token when the chunk ended the prompt (an engine that computes
  // it), else kNoToken.
  int32_t next_token = kNoToken;
  std::string error;  // non-empty: the chunk could not be computed
};

struct DecodeStep {
  EngineTime time;
  std::vector<int32_t> next_tokens;  // one per sequence, in batch order
  std::string error;                 // non-empty: the step could not be computed
};

class Engine {
 public:
  virtual ~Engine() = default;
  // KV bytes of one block (trace::kTraceBlockTokens tokens) as this engine lays them out, and
  // the job moves and stores them.
  virtual uint64_t block_bytes() const = 0;
  // `bytes` of memory for KV (a prefill rank's staging), where this engine keeps KV.
  virtual std::unique_ptr<KvMemory> AllocateKv(uint64_t bytes) = 0;
  // true: times are predictions the caller lets pass on its clock (the cost model); false: the
  // engine computes, its calls take their time, and the KV it writes is the model's own.
  virtual bool models_time() const = 0;
  // Computes the chunk and writes its complete blocks' KV.
  virtual PrefillResult Prefill(const PrefillChunk& chunk) = 0;
  // A request joins this decode instance: `kv` holds its prompt's blocks in order (as the
  // prefill wrote them), `first_token` is the token its prefill generated. An engine that models
  // only time keeps nothing. Errors name what was wrong with the blocks.
  virtual Status StartDecode(uint64_t request, std::span<const std::byte> kv, int64_t input_length,
                             int32_t first_token) {
    (void)request, (void)kv, (void)input_length, (void)first_token;
    return Status::Ok();
  }
  // The request left the batch (finished or dropped): its state goes.
  virtual void EndDecode(uint64_t request) { (void)request; }
  // One decode step: every sequence of `batch` gets its next token.
  virtual DecodeStep Decode(std::span<const DecodeSeq> batch) = 0;
};

}  // namespace mooncake::engine
