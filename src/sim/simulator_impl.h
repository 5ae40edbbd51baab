// Internal to src/sim: the simulator's state and event handlers. simulator.cc holds the common
// part and the Mooncake (disaggregated) instances; colocated.cc the vLLM-like instances;
// store_sim.h the store's metadata master on the virtual clock.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "conductor/scheduler.h"
#include "engine/decode_batcher.h"
#include "sim/event_queue.h"
#include "sim/simulator.h"
#include "sim/store_sim.h"

namespace mooncake::sim {

struct RequestState {
  const trace::TraceRequest* trace = nullptr;
  Nanos arrival{0};
  conductor::Decision decision;
  Nanos compute_start{0};
  Nanos first_token{-1};
  Nanos last_token{0};
  int32_t generated = 0;          // output tokens produced so far
  int64_t prefilled_tokens = 0;   // prompt tokens whose KV exists on the prefill side
  int64_t step_tokens = 0;        // colocated: prompt tokens the step in progress computes
  size_t stored_blocks = 0;       // prompt blocks already reported to the scheduler as stored
  size_t written_blocks = 0;      // prompt blocks already put into the store (store_ only)
  int32_t prefix_blocks_hit = 0;  // prefix blocks really reused (the store's answer if it runs)
  trace::TbtAccumulator tbt;
  double prefill_compute_s = 0;
  bool prefilled = false;
  trace::Outcome outcome = trace::Outcome::kLost;
  std::string reason;
  Nanos done{0};
};

struct PrefillInstance {
  std::deque<uint32_t> queue;
  bool busy = false;
};

// A decode instance, or a colocated instance (vLLM's waiting and running queues).
struct DecodeInstance {
  explicit DecodeInstance(int64_t hbm_kv_tokens) : decoding(hbm_kv_tokens) {}
  // Requests whose KV arrived, waiting for HBM and then decoding (the live decode role's
  // batching, engine/decode_batcher.h). Colocated: joined at their first token.
  engine::DecodeBatcher<uint32_t> decoding;
  bool busy = false;
  // Colocated only: prompts arrived and not started (vLLM's waiting queue); prompts started and
  // not finished, in arrival order (vLLM's running prefills); and whether the step in progress is
  // a prefill-only step (vLLM without chunking).
  std::deque<uint32_t> waiting;
  std::vector<uint32_t> prefilling;
  bool prefill_step = false;
};

class Simulator {
 public:
  Simulator(const SimConfig& config, const VllmLimits& vllm, const engine::CostModel& cost,
            const std::vector<trace::TraceRequest>& requests, const SimHooks& hooks = {});
  SimResult Run();

 private:
  // simulator.cc
  void OnArrival(uint32_t r);
  void StartPrefill(int p);
  void OnFetchDone(int p, uint32_t r);
  void ScheduleChunk(int p, uint32_t r);
  void OnPrefillChunk(int p, uint32_t r);
  void OnKvArrived(int d, uint32_t r);
  void StartDecodeStep(int d);
  void OnDecodeStep(int d);
  void ReadPrefixFromStore(RequestState& s);
  void StoreCompletedBlocks(int p, RequestState& s, bool all);
  void FinishRequest(uint32_t r, int d);
  void RejectRequest(uint32_t r, conductor::RejectReason reason);
  void AdvanceBatch(int d);
  SimResult Collect();
  // colocated.cc
  void ArriveColocated(uint32_t r);
  void StartColocatedStep(int i);
  bool TakePrefills(DecodeInstance& inst, engine::StepWork* work);
  void TakeChunks(DecodeInstance& inst, engine::StepWork* work);
  bool Fits(const DecodeInstance& inst, const RequestState& s) const;
  void OnColocatedStep(int i);
  void FirstTokenColocated(int i, uint32_t r);

  SimConfig config_;
  VllmLimits vllm_;
  const engine::CostModel& cost_;
  const std::vector<trace::TraceRequest>& requests_;
  conductor::Scheduler scheduler_;
  std::unique_ptr<StoreSim> store_;  // Mooncake with store ranks or a global pool, else null
  EventQueue events_;
  std::vector<RequestState> state_;
  std::vector<PrefillInstance> prefill_;
  std::vector<DecodeInstance> decode_;
  std::map<std::string, double> bytes_;  // bytes moved per plane
  uint64_t prefill_steps_ = 0;           // colocated steps that computed prompt tokens
  uint64_t prefill_step_chunks_ = 0;     // prompt chunks in those steps (prompts batched)
  int64_t hbm_tokens_;
};

}  // namespace mooncake::sim
