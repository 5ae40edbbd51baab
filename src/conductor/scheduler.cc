#include "conductor/scheduler.h"

#include <fmt/format.h>

#include <algorithm>

#include "conductor/scheduler_calls.h"

namespace mooncake::conductor {

namespace {

SchedulerCall MakeCall(SchedulerCall::Kind kind, int instance, RequestId id, Nanos now) {
  SchedulerCall c;
  c.kind = kind;
  c.instance = instance;
  c.id = id;
  c.now = now;
  return c;
}

}  // namespace

Status ValidateSchedulerConfig(const SchedulerConfig& c) {
  if (c.prefill_instances < 1) return InvalidArgument("cluster.prefill: must be >= 1");
  if (!c.colocated && c.decode_instances < 1)
    return InvalidArgument("cluster.decode: must be >= 1");
  if (!(c.balancing_threshold >= 1.0)) {
    return InvalidArgument(
        fmt::format("conductor.balancing_threshold: {} must be >= 1", c.balancing_threshold));
  }
  if (c.prefill_chunk_tokens < 0) return InvalidArgument("prefill.chunk_tokens: must be >= 0");
  if (c.ttft_slo <= Nanos(0)) return InvalidArgument("slo.ttft: must be > 0");
  if (c.tbt_slo <= Nanos(0)) return InvalidArgument("slo.tbt: must be > 0");
  return Status::Ok();
}

Scheduler::Scheduler(SchedulerConfig config, const engine::CostModel* cost)
    : config_(config),
      cost_(cost),
      index_(config.prefill_instances, config.cache_capacity_blocks, config.shared_pool),
      decode_(config.colocated ? config.prefill_instances : config.decode_instances, cost,
              config.assumed_decode_time),
      prefill_(config.prefill_instances),
      prefill_dead_(config.prefill_instances, 0),
      decode_dead_(config.colocated ? config.prefill_instances : config.decode_instances, 0),
      rng_(config.seed),
      few_holders_(std::max<size_t>(8, static_cast<size_t>(config.prefill_instances) / 32)),
      prefill_order_(config.prefill_instances, few_holders_),
      deep_mark_(config.prefill_instances, 0) {
  const bool search = !config.exhaustive_search &&
                      config.prefill_instances >= std::max(1, config.pruned_search_from);
  const bool prune = search && !config.colocated;
  prune_prefill_ = prune && config.policy != PrefillPolicy::kRandom;
  prune_decode_ = prune;
  use_holders_ = search && config.prefix_cache && !config.shared_pool;
  // The load orders of the hot blocks' holders follow the index's holder lists.
  if (prune_prefill_ && use_holders_) index_.set_listener(&prefill_order_);
  for (int i = 0; i < config.prefill_instances; ++i) NotePrefillChanged(i);
}

void Scheduler::NotePrefillChanged(int i) {
  if (prune_prefill_ && !prefill_dead_[i]) {
    prefill_order_.Update(i, prefill_[i].free_at, prefill_[i].outstanding);
  }
}

void Scheduler::Log(const SchedulerCall& call) {
  if (log_ != nullptr) log_->push_back(call);
}

int64_t Scheduler::PrefixTokens(int blocks, int32_t input) const {
  // The last prompt token is always computed: it yields the first output token.
  return std::min<int64_t>(int64_t{blocks} * cost_->block_tokens(), std::max(0, input - 1));
}

void Scheduler::PlacePrefix(const BestPrefix& best, Candidate* c) const {
  c->prefix = c->local;
  if (config_.prefix_cache && config_.shared_pool && c->local > 0) {
    // The pool lives in remote DRAM: the prefix is always loaded over the NICs.
    c->transfer = cost_->TransferTime(cost_->KvBytesPerBlock() * static_cast<uint64_t>(c->local));
  }
  if (config_.policy == PrefillPolicy::kKvCacheCentric && !config_.shared_pool &&
      best.blocks > c->local &&
      (c->local == 0 ||
       static_cast<double>(best.blocks) / c->local > config_.balancing_threshold)) {
    c->prefix = best.blocks;
    c->transfer = cost_->TransferTime(cost_->KvBytesPerBlock() *
                                      static_cast<uint64_t>(best.blocks - c->local));
  }
}

Scheduler::Candidate Scheduler::Evaluate(int i, const Request& r, const BestPrefix& best,
                                         Nanos now) const {
  Candidate c;
  c.instance = i;
  c.local = config_.prefix_cache ? index_.LocalPrefix(i, r.hash_ids) : 0;
  PlacePrefix(best, &c);
  c.queue = std::max(Nanos(0), prefill_[i].free_at - now);
  c.prefill = cost_->PrefillTime(r.input_length, PrefixTokens(c.prefix, r.input_length),
                                 config_.prefill_chunk_tokens);
  return c;
}

int Scheduler::PickPrefill(const Request& r, Nanos now, BestPrefix* best_out, Candidate* out) {
  const int n = config_.prefill_instances;
  if (use_holders_) {
    index_.FindPrefixHolders(r.hash_ids, few_holders_, &holders_);
    *best_out = holders_.best;
  } else {
    *best_out = config_.prefix_cache ? index_.FindBestPrefix(r.hash_ids) : BestPrefix{};
  }
  const BestPrefix& best = *best_out;
  if (config_.policy == PrefillPolicy::kRandom) {
    int i = static_cast<int>(rng_() % static_cast<uint64_t>(n));
    for (int k = 0; k < n && prefill_dead_[i]; ++k) i = (i + 1) % n;
    *out = Evaluate(i, r, best, now);
    return i;
  }
  if (prune_prefill_) {
    if (prefill_order_.AdvanceTo(now)) return PickPrefillPruned(r, best, now, out);
    ++stats_.full_fallbacks;  // a decision earlier than the last one: the order cannot answer
  }
  stats_.prefill_evaluated += static_cast<uint64_t>(n);
  bool have = false;
  Candidate best_c;
  int64_t best_tie = 0;
  for (int k = 0; k < n; ++k) {
    const int i = (rotate_ + k) % n;
    if (prefill_dead_[i]) continue;
    Candidate c = Evaluate(i, r, best, now);
    // load_balance looks at the queue only; the cache-aware policies at the whole TTFT.
    const Nanos key = config_.policy == PrefillPolicy::kLoadBalance ? c.queue : c.Ttft();
    const Nanos best_key =
        config_.policy == PrefillPolicy::kLoadBalance ? best_c.queue : best_c.Ttft();
    // Ties go to the instance with less decode work (colocated) or fewer queued requests.
    const int64_t tie = config_.colocated ? decode_.ActiveTokens(i) : prefill_[i].outstanding;
    if (!have || key < best_key || (key == best_key && tie < best_tie)) {
      have = true;
      best_c = c;
      best_tie = tie;
    }
  }
  *out = best_c;
  return best_c.instance;
}

int Scheduler::PickDecode(int64_t tokens, Nanos join_at, Nanos* tbt) {
  if (prune_decode_) return PickDecodePruned(tokens, join_at, tbt);
  const int n = config_.decode_instances;
  stats_.decode_evaluated += static_cast<uint64_t>(n);
  int pick = -1;
  int64_t pick_tokens = 0;
  for (int k = 0; k < n; ++k) {
    const int i = (rotate_ + k) % n;
    if (decode_dead_[i]) continue;
    const Nanos t = config_.early_rejection == EarlyRejection::kPredicted
                        ? decode_.PredictTbtAt(i, join_at, tokens)
                        : decode_.PredictTbtNow(i, tokens);
    const int64_t load = decode_.ActiveTokens(i);
    if (pick < 0 || t < *tbt || (t == *tbt && load < pick_tokens)) {
      pick = i;
      *tbt = t;
      pick_tokens = load;
    }
  }
  return pick;
}

Decision Scheduler::Reject(Decision d, RejectReason reason) {
  d.accepted = false;
  d.reason = reason;
  ++rejected_[static_cast<int>(reason)];
  return d;
}

Decision Scheduler::Decide(const Request& r, Nanos now, bool admission) {
  Decision d = DecideUnlogged(r, now, admission);
  if (log_ != nullptr) {
    SchedulerCall call = MakeCall(SchedulerCall::Kind::kDecide, -1, r.id, now);
    call.admission = admission;
    call.request = r;
    call.decision = d;
    Log(call);
  }
  return d;
}

Decision Scheduler::DecideUnlogged(const Request& r, Nanos now, bool admission) {
  Decision d;
  BestPrefix best;
  Candidate c;
  d.prefill = PickPrefill(r, now, &best, &c);
  if (d.prefill < 0) return Reject(d, RejectReason::kNoLiveInstance);
  rotate_ = (rotate_ + 1) % std::max(config_.prefill_instances, config_.decode_instances);
  d.local_prefix_blocks = c.local;
  d.prefix_blocks = c.prefix;
  d.fetch_from = c.prefix > c.local && !config_.shared_pool ? best.instance : -1;
  d.prefix_tokens = PrefixTokens(c.prefix, r.input_length);
  d.t_transfer = c.transfer;
  d.t_queue = c.queue;
  d.t_prefill = c.prefill;
  d.predicted_ttft = c.Ttft();
  if (config_.prefix_cache) {
    const int global = std::max(best.blocks, c.prefix);
    for (size_t k = global; k < r.hash_ids.size() && inflight_.Contains(r.hash_ids[k].value); ++k) {
      ++d.inflight_miss_blocks;
    }
  }
  const int64_t tokens = DecodeLoad::ContextTokens(r.input_length, r.output_length);
  const Nanos join_at = now + d.predicted_ttft;
  if (config_.colocated) {
    d.decode = d.prefill;
    d.predicted_tbt = decode_.PredictTbtNow(d.decode, tokens);
  } else {
    d.decode = PickDecode(tokens, join_at, &d.predicted_tbt);
    if (d.decode < 0) return Reject(d, RejectReason::kNoLiveInstance);
  }
  if (config_.admission && admission) {
    if (d.predicted_ttft + config_.ttft_margin > config_.ttft_slo) {
      return Reject(d, RejectReason::kTtftSlo);
    }
    if (config_.early_rejection == EarlyRejection::kCurrent && d.predicted_tbt > config_.tbt_slo) {
      return Reject(d, RejectReason::kTbtSloCurrent);
    }
    if (config_.early_rejection == EarlyRejection::kPredicted &&
        d.predicted_tbt > config_.tbt_slo) {
      return Reject(d, RejectReason::kTbtSloPredicted);
    }
  }
  d.accepted = true;
  ++accepted_;
  PrefillState& p = prefill_[d.prefill];
  p.free_at = std::max(p.free_at, now) + c.transfer + c.prefill;
  ++p.outstanding;
  NotePrefillChanged(d.prefill);
  Pending pend{d.prefill, d.decode, p.free_at, p.corrections, tokens, {}};
  if (config_.prefix_cache) {
    index_.Touch(d.prefill, r.hash_ids.first(d.local_prefix_blocks));
    if (d.fetch_from >= 0) {
      index_.Touch(d.fetch_from, r.hash_ids.subspan(d.local_prefix_blocks,
                                                    d.prefix_blocks - d.local_prefix_blocks));
      ++fetches_;
      fetched_blocks_ += d.prefix_blocks - d.local_prefix_blocks;
    }
    pend.computing.assign(r.hash_ids.begin() + d.prefix_blocks, r.hash_ids.end());
    for (BlockHash b : pend.computing) ++inflight_.FindOrInsert(b.value);
  }
  decode_.AddPending(r.id, d.decode, join_at, tokens);
  pending_[r.id.value] = std::move(pend);
  return d;
}

void Scheduler::OnBlocksStored(int prefill, std::span<const BlockHash> blocks, Nanos now) {
  if (log_ != nullptr) {
    SchedulerCall call = MakeCall(SchedulerCall::Kind::kBlocksStored, prefill, RequestId{}, now);
    call.blocks = blocks;
    Log(call);
  }
  if (config_.prefix_cache) index_.Store(prefill, blocks);
}

void Scheduler::OnPrefillDone(RequestId id, int prefill, Nanos now) {
  if (log_ != nullptr) Log(MakeCall(SchedulerCall::Kind::kPrefillDone, prefill, id, now));
  PrefillState& p = prefill_[prefill];
  auto it = pending_.find(id.value);
  if (it != pending_.end()) {
    // Shift the rest of the queue by how far this prediction was off, counting only what the
    // corrections since the prediction did not already account for.
    const Nanos expected =
        it->second.predicted_prefill_end + (p.corrections - it->second.corrections_at_decide);
    p.free_at += now - expected;
    p.corrections += now - expected;
    for (BlockHash b : it->second.computing) {
      int* f = inflight_.Find(b.value);
      if (f != nullptr && --*f == 0) inflight_.Erase(b.value);
    }
    it->second.computing.clear();
    it->second.prefilled = true;
  }
  if (--p.outstanding <= 0) {
    p.outstanding = 0;
    p.free_at = now;
  }
  p.free_at = std::max(p.free_at, now);
  NotePrefillChanged(prefill);
}

RejectReason Scheduler::AdmitToDecode(RequestId id, int decode, Nanos now, bool admission) {
  const RejectReason reason = AdmitToDecodeUnlogged(id, decode, now, admission);
  if (log_ != nullptr) {
    SchedulerCall call = MakeCall(SchedulerCall::Kind::kAdmitToDecode, decode, id, now);
    call.admission = admission;
    call.admitted = reason;
    Log(call);
  }
  return reason;
}

RejectReason Scheduler::AdmitToDecodeUnlogged(RequestId id, int decode, Nanos now, bool admission) {
  auto it = pending_.find(id.value);
  const int64_t tokens = it == pending_.end() ? 0 : it->second.decode_tokens;
  if (config_.admission && admission && decode_.PredictTbtNow(decode, tokens) > config_.tbt_slo) {
    decode_.Remove(id, decode, now);
    if (it != pending_.end()) pending_.erase(it);
    ++rejected_[static_cast<int>(RejectReason::kDecodeOverload)];
    return RejectReason::kDecodeOverload;
  }
  decode_.Join(id, decode, now);
  return RejectReason::kNone;
}

void Scheduler::MarkPrefillDead(int prefill) {
  if (log_ != nullptr)
    Log(MakeCall(SchedulerCall::Kind::kMarkPrefillDead, prefill, RequestId{}, Nanos(0)));
  prefill_dead_.at(prefill) = 1;
  prefill_order_.Remove(prefill);
  index_.DropInstance(prefill);  // its cache died with it: never fetch from it
}

void Scheduler::ForgetBlocks(std::span<const BlockHash> blocks) {
  if (log_ != nullptr) {
    SchedulerCall call = MakeCall(SchedulerCall::Kind::kForgetBlocks, -1, RequestId{}, Nanos(0));
    call.blocks = blocks;
    Log(call);
  }
  for (BlockHash b : blocks) index_.Forget(b);
}

void Scheduler::MarkDecodeDead(int decode) {
  if (log_ != nullptr)
    Log(MakeCall(SchedulerCall::Kind::kMarkDecodeDead, decode, RequestId{}, Nanos(0)));
  decode_dead_.at(decode) = 1;
  decode_.Exclude(decode);
}

void Scheduler::Abandon(RequestId id) {
  if (log_ != nullptr) Log(MakeCall(SchedulerCall::Kind::kAbandon, -1, id, Nanos(0)));
  auto it = pending_.find(id.value);
  if (it == pending_.end()) return;
  const Pending& p = it->second;
  for (BlockHash b : p.computing) {
    int* in = inflight_.Find(b.value);
    if (in != nullptr && --*in <= 0) inflight_.Erase(b.value);
  }
  if (!p.prefilled && prefill_[p.prefill].outstanding > 0) {
    --prefill_[p.prefill].outstanding;
    NotePrefillChanged(p.prefill);
  }
  if (p.decode >= 0) decode_.Forget(id, p.decode);
  pending_.erase(it);
}

void Scheduler::OnDecodeDone(RequestId id, int decode, Nanos now) {
  if (log_ != nullptr) Log(MakeCall(SchedulerCall::Kind::kDecodeDone, decode, id, now));
  decode_.Remove(id, decode, now);
  pending_.erase(id.value);
}

}  // namespace mooncake::conductor
