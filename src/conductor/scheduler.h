// The conductor's scheduler: prefix matching, prefill/decode selection, admission and early
// rejection (Mooncake Algorithm 1 and the arXiv report's overload handling).
//
// Pure logic on an injected clock value (`now`, model time): the live conductor rank and the
// simulator drive the same object. Protocol per request:
//   Decide -> (accepted) OnBlocksStored* -> OnPrefillDone -> AdmitToDecode -> OnDecodeDone
// Decide updates the scheduler's own load forecast; the notifications correct it with what
// really happened. Not thread-safe: one owner thread. The cost model must outlive it.
//
// Decide makes Algorithm 1's choice without evaluating every instance (unless
// `exhaustive_search`): the prefill side evaluates the few instances that hold a long prefix of
// the prompt (KvIndex::FindPrefixHolders), then walks the others from the least loaded
// (PrefillLoadOrder) and stops when no instance left can beat, or tie and win the tie-break
// against, the best so far; the decode side walks the decode instances by active tokens with a
// lower bound of their predicted TBT. Every choice, tie-break included, is the full
// evaluation's (tests/sim/pruned_search_test.cc replays the paper's traces both ways). Small
// clusters (under `pruned_search_from` prefill instances) are evaluated in full: it is cheaper.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/status.h"
#include "conductor/decode_load.h"
#include "conductor/flat_id_map.h"
#include "conductor/kv_index.h"
#include "conductor/load_order.h"
#include "conductor/policy.h"
#include "engine/cost_model.h"

namespace mooncake::conductor {

struct SchedulerConfig {
  int prefill_instances = 1;
  int decode_instances = 1;
  bool colocated = false;  // vLLM-like: instance i decodes what it prefilled (decode = prefill)
  PrefillPolicy policy = PrefillPolicy::kKvCacheCentric;
  // kvcache_centric fetches the best remote prefix when best / local > threshold (>= 1).
  double balancing_threshold = 1.5;
  EarlyRejection early_rejection = EarlyRejection::kPredicted;
  bool admission = true;  // reject requests whose predicted TTFT/TBT breaks the SLO
  Nanos ttft_slo = std::chrono::seconds(30);
  Nanos tbt_slo = std::chrono::milliseconds(100);
  // Admission keeps this much headroom under ttft_slo: the live job's own overhead (dispatch,
  // clock offsets, thread wake-ups) that the cost model does not see. 0 in the simulator.
  Nanos ttft_margin{0};
  // The prefill engine's chunk (tokens; 0 = one pass): the forecast costs the same passes as
  // the prefill itself (CostModel::PrefillTime), each of which reads all weights.
  int64_t prefill_chunk_tokens = 0;
  bool prefix_cache = true;            // instances keep the KV they computed
  uint64_t cache_capacity_blocks = 0;  // per instance (or of the shared pool); 0 = unbounded
  bool shared_pool = false;            // one global LRU pool instead of per-instance caches
  Nanos assumed_decode_time = std::chrono::seconds(10);  // t_d until decodes were observed
  uint64_t seed = 1;
  // Evaluate every instance for every request, as Algorithm 1 is written (the reference that
  // the pruned search is checked against, and conductor_bench's baseline). Same decisions.
  bool exhaustive_search = false;
  // The pruned search starts at this many prefill instances. Below, evaluating every instance
  // costs less than keeping the load orders current (conductor_bench, conversation trace:
  // 16 + 16 instances 0.6x, 32 + 32 0.7x, 64 + 64 1.6x the full evaluation's decisions/s).
  int pruned_search_from = 64;
};
Status ValidateSchedulerConfig(const SchedulerConfig& config);

struct Request {
  RequestId id;
  Nanos arrival{0};
  int32_t input_length = 0;
  int32_t output_length = 0;
  std::span<const BlockHash> hash_ids;  // must stay valid during Decide only
};

struct Decision {
  bool accepted = false;
  RejectReason reason = RejectReason::kNone;
  int prefill = -1;
  int decode = -1;
  int local_prefix_blocks = 0;   // held by the chosen prefill instance
  int prefix_blocks = 0;         // reused in total (local + fetched)
  int fetch_from = -1;           // instance that sends blocks [local, prefix), or -1
  int inflight_miss_blocks = 0;  // blocks after the cached prefix that were being computed
  int64_t prefix_tokens = 0;     // tokens the prefill skips
  Nanos t_transfer{0}, t_queue{0}, t_prefill{0};
  Nanos predicted_ttft{0}, predicted_tbt{0};
  friend bool operator==(const Decision&, const Decision&) = default;
};

struct SchedulerCall;  // conductor/scheduler_calls.h

// How much work the decisions took (conductor_bench prints it).
struct SearchStats {
  uint64_t prefill_evaluated = 0;  // prefill instances evaluated, over all decisions
  uint64_t decode_evaluated = 0;   // decode instances whose TBT was predicted
  uint64_t full_fallbacks = 0;     // pruned decisions that evaluated every instance instead
};

class Scheduler {
 public:
  Scheduler(SchedulerConfig config, const engine::CostModel* cost);
  Scheduler(const Scheduler&) = delete;  // its index reports to its own load order
  Scheduler& operator=(const Scheduler&) = delete;

  // `admission` false: no SLO check (a request re-dispatched after its rank died was already
  // admitted); it is rejected only when no live instance is left.
  Decision Decide(const Request& request, Nanos now, bool admission = true);
  // Blocks now held by a prefill instance (computed, or fetched from another instance).
  void OnBlocksStored(int prefill, std::span<const BlockHash> blocks, Nanos now);
  void OnPrefillDone(RequestId id, int prefill, Nanos now);
  // The decode instance's check when the KV has arrived: kNone (joined) or kDecodeOverload.
  // `admission` false: joins without the check (a request re-dispatched after its rank died was
  // admitted at its arrival, so it is served late rather than refused now).
  RejectReason AdmitToDecode(RequestId id, int decode, Nanos now, bool admission = true);
  void OnDecodeDone(RequestId id, int decode, Nanos now);

  // Faults (the live job). A dead instance is never chosen again (Decide rejects with
  // kNoInstance when none of a kind is left); Abandon forgets a request that is re-dispatched or
  // failed, releasing its queue, in-flight blocks and decode reservation.
  void MarkPrefillDead(int prefill);
  void MarkDecodeDead(int decode);
  // Blocks that lost every replica in the store: later requests recompute them.
  void ForgetBlocks(std::span<const BlockHash> blocks);
  void Abandon(RequestId id);

  const SchedulerConfig& config() const { return config_; }
  const KvIndex& index() const { return index_; }
  const DecodeLoad& decode_load() const { return decode_; }
  uint64_t accepted() const { return accepted_; }
  uint64_t rejected(RejectReason r) const { return rejected_[static_cast<int>(r)]; }
  uint64_t fetches() const { return fetches_; }
  uint64_t fetched_blocks() const { return fetched_blocks_; }
  // Predicted time at which the instance's prefill queue drains.
  Nanos PrefillFreeAt(int prefill) const { return prefill_[prefill].free_at; }
  // Requests dispatched to the prefill instance whose prefill has not finished.
  int PrefillOutstanding(int prefill) const { return prefill_[prefill].outstanding; }
  const SearchStats& search_stats() const { return stats_; }
  // Appends every later call and its answer to *log (not owned; null stops). The request and
  // block spans are recorded as given: they must outlive the log.
  void set_call_log(std::vector<SchedulerCall>* log) { log_ = log; }

 private:
  struct PrefillState {
    Nanos free_at{0};
    int outstanding = 0;
    // Sum of the corrections applied to free_at by OnPrefillDone. A prediction made after a
    // correction already contains it, so each request's error is measured against its
    // prediction plus the corrections applied since (else errors would compound).
    Nanos corrections{0};
  };
  struct Pending {
    int prefill, decode;
    Nanos predicted_prefill_end;
    Nanos corrections_at_decide;
    int64_t decode_tokens;
    std::vector<BlockHash> computing;  // blocks this request computes (in flight until done)
    bool prefilled = false;
  };
  struct Candidate {
    int instance = -1;
    int local = 0, prefix = 0;
    Nanos transfer{0}, queue{0}, prefill{0};
    Nanos Ttft() const { return transfer + queue + prefill; }
  };

  Decision DecideUnlogged(const Request& r, Nanos now, bool admission);
  RejectReason AdmitToDecodeUnlogged(RequestId id, int decode, Nanos now, bool admission);
  Candidate Evaluate(int instance, const Request& r, const BestPrefix& best, Nanos now) const;
  // The prefix a candidate prefills from and the time to load it, from its local prefix
  // (c->local): the pool's copy, or for kvcache_centric the best prefix when the balancing
  // threshold says fetching it beats recomputing. Shared by Evaluate and CandidateFor.
  void PlacePrefix(const BestPrefix& best, Candidate* c) const;
  int PickPrefill(const Request& r, Nanos now, BestPrefix* best, Candidate* out);
  int PickDecode(int64_t tokens, Nanos join_at, Nanos* tbt);
  // scheduler_pruned.cc: the same choices, evaluating only the instances that can win.
  int PickPrefillPruned(const Request& r, const BestPrefix& best, Nanos now, Candidate* out);
  int PickDecodePruned(int64_t tokens, Nanos join_at, Nanos* tbt);
  Candidate CandidateFor(int instance, int local, const Request& r, const BestPrefix& best,
                         Nanos now);
  Nanos MemoPrefillTime(const Request& r, int prefix_blocks);
  void NotePrefillChanged(int prefill);
  void Log(const SchedulerCall& call);
  int64_t PrefixTokens(int blocks, int32_t input) const;
  Decision Reject(Decision d, RejectReason reason);

  SchedulerConfig config_;
  const engine::CostModel* cost_;
  KvIndex index_;
  DecodeLoad decode_;
  std::vector<PrefillState> prefill_;
  std::vector<char> prefill_dead_, decode_dead_;  // by instance
  std::unordered_map<uint64_t, Pending> pending_;
  FlatIdMap<int> inflight_;  // block -> requests computing it
  std::mt19937_64 rng_;
  int rotate_ = 0;  // start of the tie-breaking scan, advanced per decision
  // The pruned search (not exhaustive_search): which parts it prunes, and its state.
  bool prune_prefill_ = false;  // load_balance / cache_aware / kvcache_centric, not colocated
  bool prune_decode_ = false;   // not colocated
  bool use_holders_ = false;    // per-instance caches: the best prefix from the holder lists
  // A block held by more than this many instances is "hot": its holders have a load order, and
  // FindPrefixHolders enumerates only the holders of blocks that are not.
  size_t few_holders_;
  PrefillLoadOrder prefill_order_;
  PrefixHolders holders_;
  std::vector<uint32_t> deep_mark_;  // by instance: == mark_ when evaluated as a deep holder
  uint32_t mark_ = 0;
  std::vector<std::pair<int, Nanos>> prefill_memo_;  // (prefix blocks, prefill time) this decision
  SearchStats stats_;
  std::vector<SchedulerCall>* log_ = nullptr;
  uint64_t accepted_ = 0, fetches_ = 0, fetched_blocks_ = 0;
  std::array<uint64_t, kRejectReasonCount> rejected_{};
};

}  // namespace mooncake::conductor
