// Internal to src/sim: the simulator's state and event handlers. simulator.cc holds the common
// part and the Mooncake (disaggregated) instances; colocated.cc the vLLM-like instances.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "conductor/scheduler.h"
#include "sim/event_queue.h"
#include "sim/simulator.h"

namespace mooncake::sim {

struct RequestState {
  const trace::TraceRequest* trace = nullptr;
  Nanos arrival{0};
  conductor::Decision decision;
  Nanos compute_start{0};
  Nanos first_token{-1};
  Nanos last_token{0};
  int32_t generated = 0;         // output tokens produced so far
  int64_t prefilled_tokens = 0;  // prompt tokens whose KV exists on the prefill side
  size_t stored_blocks = 0;      // prompt blocks already reported as stored
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

// A decode instance, or the decode side of a colocated instance.
struct DecodeInstance {
  std::deque<uint32_t> waiting;  // KV arrived (or prefilled), not yet in the batch
  std::vector<uint32_t> batch;
  int64_t reserved_tokens = 0;  // input + output of the batch: admission against HBM
  int64_t context_tokens = 0;   // input + generated of the batch: step cost
  bool busy = false;
  // Colocated only: the request being prefilled and the kind of the step in progress.
  int64_t prefilling = -1;
  int64_t step_chunk = 0;
};

class Simulator {
 public:
  Simulator(const SimConfig& config, const engine::CostModel& cost,
            const std::vector<trace::TraceRequest>& requests);
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
  void StoreCompletedBlocks(int p, RequestState& s, bool all);
  void FinishRequest(uint32_t r, int d);
  void RejectRequest(uint32_t r, conductor::RejectReason reason);
  void AdmitWaiting(DecodeInstance& inst);
  void AdvanceBatch(int d);
  SimResult Collect();
  // colocated.cc
  void StartColocatedStep(int i);
  void OnColocatedStep(int i);
  void FirstTokenColocated(int i, uint32_t r);

  SimConfig config_;
  const engine::CostModel& cost_;
  const std::vector<trace::TraceRequest>& requests_;
  conductor::Scheduler scheduler_;
  EventQueue events_;
  std::vector<RequestState> state_;
  std::vector<PrefillInstance> prefill_;
  std::vector<DecodeInstance> decode_;
  std::map<std::string, double> bytes_;  // bytes moved per plane
  int64_t hbm_tokens_;
};

}  // namespace mooncake::sim
