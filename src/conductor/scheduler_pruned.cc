// The pruned search: Algorithm 1's choice (and the decode choice) without evaluating every
// instance. Each function here returns exactly what its full counterpart in scheduler.cc
// returns, tie-breaks included; the comments say why each instance left out cannot win.
#include <algorithm>

#include "conductor/scheduler.h"

namespace mooncake::conductor {

Nanos Scheduler::MemoPrefillTime(const Request& r, int prefix_blocks) {
  for (const auto& [blocks, t] : prefill_memo_) {
    if (blocks == prefix_blocks) return t;
  }
  const Nanos t = cost_->PrefillTime(r.input_length, PrefixTokens(prefix_blocks, r.input_length),
                                     config_.prefill_chunk_tokens);
  prefill_memo_.emplace_back(prefix_blocks, t);
  return t;
}

// Evaluate() for an instance whose local prefix is already known; the same arithmetic.
Scheduler::Candidate Scheduler::CandidateFor(int i, int local, const Request& r,
                                             const BestPrefix& best, Nanos now) {
  Candidate c;
  c.instance = i;
  c.local = local;
  PlacePrefix(best, &c);
  c.queue = i >= 0 ? std::max(Nanos(0), prefill_[i].free_at - now) : Nanos(0);
  c.prefill = MemoPrefillTime(r, c.prefix);
  return c;
}

// TTFT = (transfer + prefill, fixed by the instance's local prefix) + queue. The instances
// holding a long prefix (`holders_.deep`, a few) are evaluated one by one. Every other instance
// holds L < holders_.depth leading blocks; for each such L, the instances that could hold L
// blocks (all of them for L = 0, else the holders of block L - 1, a hot block with its own load
// order) are walked from the least loaded, in the full search's order of preference (queue,
// queued requests, rotated id), until the next one's bound, queue + the fixed part of L, is
// above the best TTFT, or equal to it with a tie-break that loses: no instance after it that
// holds L blocks can win. Instances met with another length are evaluated too (harmless).
int Scheduler::PickPrefillPruned(const Request& r, const BestPrefix& best, Nanos now,
                                 Candidate* out) {
  const int n = config_.prefill_instances;
  const int start = rotate_ % n;
  const bool by_queue = config_.policy == PrefillPolicy::kLoadBalance;
  auto rotated = [&](int i) { return i >= start ? i - start : i - start + n; };
  prefill_memo_.clear();
  if (++mark_ == 0) {  // wrapped: clear the marks of 2^32 decisions ago
    std::fill(deep_mark_.begin(), deep_mark_.end(), 0);
    mark_ = 1;
  }
  bool have = false;
  Candidate best_c;
  Nanos best_key{0};
  int64_t best_tie = 0;
  // True when (key, tie, rotated id) of instance i comes before the best's.
  auto before_best = [&](Nanos key, int64_t tie, int i) {
    if (key != best_key) return key < best_key;
    if (tie != best_tie) return tie < best_tie;
    return rotated(i) < rotated(best_c.instance);
  };
  auto consider = [&](int i, int local) {
    deep_mark_[i] = mark_;
    ++stats_.prefill_evaluated;
    const Candidate c = CandidateFor(i, local, r, best, now);
    const Nanos key = by_queue ? c.queue : c.Ttft();
    const int64_t tie = prefill_[i].outstanding;
    if (!have || before_best(key, tie, i)) {
      have = true;
      best_c = c;
      best_key = key;
      best_tie = tie;
    }
  };
  // Visits instances from the least loaded while one holding `local` blocks could still win.
  auto walk_from_least_loaded = [&](int local, BlockHash holding) {
    const Candidate fixed = CandidateFor(-1, local, r, best, now);
    const Nanos floor = by_queue ? Nanos(0) : fixed.transfer + fixed.prefill;
    auto visit = [&](int i) {
      if (deep_mark_[i] == mark_) return true;  // evaluated already
      const Nanos queue = std::max(Nanos(0), prefill_[i].free_at - now);
      if (have && !before_best(queue + floor, prefill_[i].outstanding, i)) return false;
      consider(i, !config_.prefix_cache ? 0
                  : use_holders_        ? index_.LocalPrefix(i, r.hash_ids)
                                        : local);
      return true;
    };
    if (local == 0 || !prefill_order_.WalkHolders(holding, start, visit)) {
      prefill_order_.Walk(start, visit);
    }
  };
  if (!use_holders_ || by_queue) {
    // One prefix for every instance (shared pool, no cache), or a key without it: one walk.
    const int local = use_holders_ || !config_.prefix_cache ? 0 : index_.LocalPrefix(0, r.hash_ids);
    walk_from_least_loaded(local, BlockHash{});
  } else {
    for (const auto& [i, local] : holders_.deep) {
      if (!prefill_dead_[i]) consider(i, local);
    }
    for (int local = 0; local < holders_.depth; ++local) {
      walk_from_least_loaded(local, local > 0 ? r.hash_ids[local - 1] : BlockHash{});
    }
  }
  *out = best_c;
  return have ? best_c.instance : -1;
}

// Walks the decode instances by (active tokens, rotated id), the full search's tie-break. A
// predicted TBT is DecodeStepTime of at least one request and at least the new request's
// tokens (and, for the prediction of now, of at least the instance's active tokens), which
// grows with both; once that bound reaches the best TBT, no later instance can beat it, nor tie
// it and win the tie-break.
int Scheduler::PickDecodePruned(int64_t tokens, Nanos join_at, Nanos* tbt) {
  const int n = config_.decode_instances;
  const int start = rotate_ % n;
  const bool predicted = config_.early_rejection == EarlyRejection::kPredicted;
  const Nanos alone = decode_.StepTimeFor(1, tokens);
  int pick = -1;
  int64_t pick_tokens = 0;
  WalkRotated(decode_.by_active_tokens(), start, [&](const OrderKey& k) {
    const int i = k.id;
    const int64_t load = k.primary;
    const Nanos bound = predicted ? alone : decode_.StepTimeFor(1, tokens + load);
    if (pick >= 0 && bound >= *tbt) return false;
    ++stats_.decode_evaluated;
    const Nanos t =
        predicted ? decode_.PredictTbtAt(i, join_at, tokens) : decode_.PredictTbtNow(i, tokens);
    if (pick < 0 || t < *tbt || (t == *tbt && load < pick_tokens)) {
      pick = i;
      *tbt = t;
      pick_tokens = load;
    }
    return true;
  });
  return pick;
}

}  // namespace mooncake::conductor
