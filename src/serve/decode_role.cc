#include "serve/decode_role.h"

#include <fmt/format.h>
#include <algorithm>

#include "common/checksum.h"
#include "common/log.h"
#include "common/threads.h"
#include "serve/role_failure.h"

namespace mooncake::serve {

DecodeRole::DecodeRole(ServeContext& ctx, std::span<std::byte> buffer)
    : ctx_(ctx), buffer_(buffer), slots_(buffer.size()), batcher_(ctx.cost.HbmKvTokenCapacity()) {}

DecodeRole::~DecodeRole() { Stop(); }

void DecodeRole::Fail(const Status& s) { CountRoleFailure(s, mutex_, &stats_); }

DecodeStats DecodeRole::stats() const { return CopyLocked(mutex_, stats_); }

void DecodeRole::Start() {
  auto& rpc = ctx_.rpc;
  const uint64_t base = reinterpret_cast<uint64_t>(buffer_.data());
  transport::CheckRegistered(rpc.Register(
      kMsgKvOffer,
      [this, base](Rank from, std::span<const std::byte> bytes, transport::Responder r) {
        auto offer = KvOffer::Decode(bytes);
        if (!offer.ok()) return r.Fail(offer.status());
        std::lock_guard<std::mutex> lock(mutex_);
        if (offer->bytes > buffer_.size()) {
          return r.Fail(NoSpace("request " + std::to_string(offer->request) + " needs " +
                                std::to_string(offer->bytes) + " bytes of KV; decode.buffer is " +
                                std::to_string(buffer_.size())));
        }
        uint64_t offset = 0;
        if (const Slot* given = FindOffered(from, *offer)) {
          offset = given->allocation.offset;  // asked again: its answer came late
        } else {
          auto a = slots_.Allocate(offer->bytes);
          if (!a.ok()) return r.Fail(Status(ErrorCode::kBusy, "receive buffer full, retry"));
          // By offset, not by request: after a standby's takeover two attempts of one request
          // may each hold a slot (the old one's KvDone must free its own).
          slot_of_[a->offset] = Slot{*a, from.value, offer->request, offer->attempt};
          offset = a->offset;
        }
        KvOfferReply reply{{}, base + offset};
        r.Reply(reply.Encode());
      }));
  transport::CheckRegistered(rpc.Register(
      kMsgKvDone, [this](Rank from, std::span<const std::byte> bytes, transport::Responder) {
        auto kv = KvDone::Decode(bytes);
        if (!kv.ok())
          return Fail(kv.status().WithContext("KvDone from rank " + std::to_string(from.value)));
        const int64_t now = ctx_.ConductorNow().count();
        {
          std::lock_guard<std::mutex> lock(mutex_);
          if (kv->prefill_start_wall_ns > 0) {
            kv_after_start_.push_back(now - kv->prefill_start_wall_ns);
            kv_after_first_token_.push_back(now - kv->first_token_wall_ns);
          }
          arrivals_.push_back(std::move(*kv));
        }
        cv_.notify_all();
      }));
  worker_ = std::thread([this] { WorkLoop(); });
}

void DecodeRole::Stop() {
  if (!RaiseFlag(mutex_, stopping_, cv_)) return;
  JoinAll(worker_);
  LogKvTimes();
}

const DecodeRole::Slot* DecodeRole::FindOffered(Rank from, const KvOffer& offer) const {
  // Slots held at once are few (the requests between their offer and their KvDone).
  for (const auto& [offset, slot] : slot_of_) {
    if (slot.prefill == from.value && slot.request == offer.request &&
        slot.attempt == offer.attempt) {
      return &slot;
    }
  }
  return nullptr;
}

void DecodeRole::LogKvTimes() const {
  auto percentiles = [](std::vector<int64_t> v) {
    if (v.empty()) return std::string("-");
    std::sort(v.begin(), v.end());
    auto at = [&](double q) {
      return v[static_cast<size_t>(q * double(v.size() - 1) + 0.5)] / 1e6;
    };
    return fmt::format("p50 {:.2f} ms, p90 {:.2f} ms", at(0.5), at(0.9));
  };
  std::lock_guard<std::mutex> lock(mutex_);
  if (kv_after_start_.empty()) return;
  log::Info(
      "decode rank {}: KV of {} requests complete after their prefill started: {}; after "
      "the first token: {}",
      ctx_.peers.self.value, kv_after_start_.size(), percentiles(kv_after_start_),
      percentiles(kv_after_first_token_));
}

void DecodeRole::Arrive(const KvDone& kv) {
  // Verify every block where the prefill wrote it: against the checksum taken where its KV was
  // produced, and (modelled KV) against its hash id. A computing engine then copies the KV out
  // of the slot; the slot goes back.
  const uint64_t bb = ctx_.layout.block_bytes();
  const uint64_t base = reinterpret_cast<uint64_t>(buffer_.data());
  const bool by_content = ctx_.engine->models_time();
  int verified = 0, corrupt = 0;
  bool in_range =
      kv.remote_addr >= base && kv.remote_addr - base + kv.hash_ids.size() * bb <= buffer_.size();
  for (size_t b = 0; in_range && b < kv.hash_ids.size(); ++b) {
    std::span<const std::byte> block = buffer_.subspan(kv.remote_addr - base + b * bb, bb);
    if (Checksum64(block.data(), bb) == kv.checksums[b] &&
        (!by_content || ctx_.layout.Verify(kv.hash_ids[b], block))) {
      ++verified;
    } else {
      ++corrupt;
      log::Error("request {}: block {} (hash {}) has wrong bytes", kv.request, b, kv.hash_ids[b]);
    }
  }
  if (!in_range) {
    corrupt = static_cast<int>(kv.hash_ids.size());
    log::Error("request {}: KvDone names a slot outside the receive buffer", kv.request);
  }
  bool started = true;
  if (!by_content && corrupt == 0) {
    Status s = ctx_.engine->StartDecode(
        kv.request, buffer_.subspan(kv.remote_addr - base, kv.hash_ids.size() * bb),
        kv.input_length, kv.first_token);
    if (!s.ok()) {
      started = false;
      Fail(s.WithContext("decode of request " + std::to_string(kv.request)));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = kv.remote_addr >= base ? slot_of_.find(kv.remote_addr - base) : slot_of_.end();
    if (it != slot_of_.end()) {
      (void)slots_.Free(it->second.allocation);
      slot_of_.erase(it);
    }
    stats_.blocks_verified += verified;
    stats_.blocks_corrupt += corrupt;
  }
  // KV the engine could not take is as unusable as a corrupt block: the conductor resolves the
  // request (lost, kv_checksum) instead of waiting for it until the job deadline.
  if (!started) corrupt = std::max<int>(corrupt, static_cast<int>(kv.hash_ids.size()));
  KvArrived arrived{{}, kv.request, kv.attempt, ctx_.peers.self.value, verified, corrupt};
  const std::string what = "KvArrived of request " + std::to_string(kv.request);
  auto reply = ctx_.CallConductorPatiently(kMsgKvArrived, arrived.Encode(), what.c_str());
  auto r = reply.ok() ? KvArrivedReply::Decode(*reply) : Result<KvArrivedReply>(reply.status());
  if (!r.ok() || !r->admitted) ctx_.engine->EndDecode(kv.request);  // it never joins the batch
  if (!reply.ok()) return Fail(reply.status().WithContext("KvArrived"));
  if (!r.ok()) return Fail(r.status());
  if (!r->admitted) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.rejected_at_join;
    return;
  }
  Active a{kv.request,
           kv.attempt,
           ctx_.ToLocal(Nanos(kv.first_token_wall_ns)),
           trace::TbtAccumulator(kv.output_length - 1),
           {}};
  if (kv.first_token != engine::kNoToken) a.output_ids.push_back(kv.first_token);
  a.stream = kv.stream != 0;
  a.reported = a.output_ids.size();  // the first token reached the conductor in PrefillDone
  // The prefill produced the first token: one generated.
  batcher_.Enqueue({std::move(a), kv.input_length, kv.output_length, 1});
  stats_.waiting_high_water =
      std::max<uint64_t>(stats_.waiting_high_water, batcher_.waiting_size());
}

void DecodeRole::Step() {
  step_.clear();
  for (const auto& seq : batcher_.batch()) step_.push_back({seq.payload.request, seq.Context()});
  const engine::DecodeStep result = ctx_.engine->Decode(step_);
  const engine::EngineTime t = result.time;
  if (!result.error.empty()) Fail(Status(ErrorCode::kInternal, "decode step: " + result.error));
  if (t.modelled) {
    // Steps follow each other without gaps while the batch is busy, as on a GPU.
    next_step_ = std::max(next_step_, ctx_.LocalNow()) + ctx_.ModelToWall(t.model);
    SleepUntil(next_step_);
  }
  const Nanos now = ctx_.LocalNow();
  const uint64_t batch = batcher_.batch_size();
  uint64_t finished = 0;
  size_t index = 0;
  // Streamed requests' new tokens, once stream_interval has passed since the last report.
  DecodeTokens report;
  report.decode_rank = ctx_.peers.self.value;
  const bool report_due = now >= next_report_;
  batcher_.Advance([&](auto& seq, bool done) {
    Active& a = seq.payload;
    const size_t i = index++;
    if (i < result.next_tokens.size() && result.next_tokens[i] != engine::kNoToken) {
      a.output_ids.push_back(result.next_tokens[i]);
    }
    a.tbt.Add(ctx_.WallToModelSeconds(now - a.last_token));
    a.last_token = now;
    if (!done && a.stream && report_due && a.reported < a.output_ids.size()) {
      report.requests.push_back(a.request);
      report.attempts.push_back(a.attempt);
      report.offsets.push_back(static_cast<uint32_t>(a.reported));
      report.counts.push_back(static_cast<uint32_t>(a.output_ids.size() - a.reported));
      report.tokens.insert(report.tokens.end(), a.output_ids.begin() + a.reported,
                           a.output_ids.end());
      a.reported = a.output_ids.size();
    }
    if (!done) return;  // a finished request's tokens all go in DecodeDone
    ctx_.engine->EndDecode(a.request);
    DecodeDone msg{{},
                   a.request,
                   a.attempt,
                   ctx_.peers.self.value,
                   static_cast<int32_t>(seq.generated),
                   a.tbt.Tbt(),
                   (now + ctx_.clock_offset).count(),
                   std::move(a.output_ids)};
    Status s = ctx_.NotifyConductor(kMsgDecodeDone, msg.Encode());
    if (!s.ok()) Fail(s.WithContext("DecodeDone"));
    ++finished;
  });
  if (!report.requests.empty()) {
    next_report_ = now + ctx_.config.stream_interval;
    Status s = ctx_.rpc.Notify(ctx_.Conductor(), kMsgDecodeTokens, report.Encode());
    if (!s.ok()) Fail(s.WithContext("DecodeTokens"));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.tokens += batch;
  stats_.steps += 1;
  stats_.requests += finished;
  stats_.max_batch = std::max<uint64_t>(stats_.max_batch, batch);
}

void DecodeRole::WorkLoop() {
  for (;;) {
    std::deque<KvDone> arrived;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (batcher_.batch_empty() && batcher_.waiting_empty()) {
        cv_.wait_for(lock, std::chrono::milliseconds(50),
                     [this] { return stopping_ || !arrivals_.empty(); });
      }
      if (stopping_ && arrivals_.empty() && batcher_.batch_empty() && batcher_.waiting_empty()) {
        return;
      }
      if (stopping_ && !batcher_.batch_empty()) {
        // Stop came while requests were decoding: they are reported lost by the conductor.
        return;
      }
      arrived.swap(arrivals_);
    }
    for (const KvDone& kv : arrived) Arrive(kv);
    batcher_.AdmitWaiting();
    if (!batcher_.batch_empty()) Step();
  }
}

}  // namespace mooncake::serve
