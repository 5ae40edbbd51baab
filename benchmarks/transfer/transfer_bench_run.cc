#include "transfer_bench_run.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <memory>
#include <thread>

#include "transfer_bench_setup.h"
#include "tsc_clock.h"

namespace mooncake::bench {
namespace {

using transport::OpKind;
using transport::TransferBatch;
using transport::TransferRequest;

Status RunOne(const Target& t, OpKind op, size_t offset, size_t length, Nanos timeout) {
  TransferRequest r{op, t.local + offset, t.peer, t.remote + offset, length};
  auto batch = t.transport->Submit(std::span<const TransferRequest>(&r, 1));
  if (!batch.ok()) return batch.status();
  return (*batch)->Wait(timeout);
}

// Reads [offset, +length) into zeroed local memory and checks it against pattern `seed`.
Status ReadAndCheck(const Target& t, size_t offset, size_t length, uint64_t seed, Nanos timeout,
                    const char* what) {
  std::memset(t.local + offset, 0, length);
  MC_RETURN_IF_ERROR(RunOne(t, OpKind::kRead, offset, length, timeout));
  int64_t bad =
      FindPatternMismatch(seed, offset, std::span<const std::byte>(t.local + offset, length));
  if (bad >= 0) {
    return Corrupt(std::string(what) + ": byte " + std::to_string(offset + bad) + " of rank " +
                   std::to_string(t.peer.value) + " is wrong");
  }
  return Status::Ok();
}

// Invariant kept by every step: local and remote footprints both hold pattern(remote_seed).
Status VerifySlot(const Target& t, size_t offset, size_t length, Nanos timeout) {
  MC_RETURN_IF_ERROR(ReadAndCheck(t, offset, length, t.remote_seed, timeout, "read"));
  const uint64_t other = t.remote_seed ^ 0x5EEDF00Dull ^ length;
  FillPattern(other, offset, std::span<std::byte>(t.local + offset, length));
  MC_RETURN_IF_ERROR(RunOne(t, OpKind::kWrite, offset, length, timeout));
  MC_RETURN_IF_ERROR(ReadAndCheck(t, offset, length, other, timeout, "write then read back"));
  FillPattern(t.remote_seed, offset, std::span<std::byte>(t.local + offset, length));
  return RunOne(t, OpKind::kWrite, offset, length, timeout);
}

struct ThreadOutcome {
  uint64_t batches = 0;
  Nanos last_done{0};
  std::vector<double> latencies_us;
  Status status;
};

// One thread's loop: keeps `depth` batches in flight until `end`, then drains.
void Loop(const CaseSpec& spec, const Target& t, size_t slots, size_t first_slot, Nanos end,
          bool record, ThreadOutcome* out) {
  const Clock& clock = BenchClock();
  struct InFlight {
    std::unique_ptr<TransferBatch> batch;
    Nanos start;
  };
  std::deque<InFlight> inflight;
  std::vector<TransferRequest> requests(spec.batch_size);
  size_t cursor = first_slot;
  // One clock read per completed batch: it ends that batch and starts the next one (the clock
  // costs ~40 ns on this VM, a fifth of a 4 KiB read; three reads per loop showed in the p50).
  // A batch's latency thus also covers the loop's own overhead between batches.
  Nanos now = clock.Now();
  auto finish_oldest = [&]() -> bool {
    InFlight f = std::move(inflight.front());
    inflight.pop_front();
    Status s = f.batch->Wait(spec.timeout);
    if (!s.ok()) {
      out->status = s;
      return false;
    }
    now = clock.Now();
    ++out->batches;
    out->last_done = now;
    if (record) out->latencies_us.push_back((now - f.start).count() / 1e3);
    return true;
  };
  while (now < end) {
    for (auto& r : requests) {
      size_t offset = (cursor++ % slots) * spec.block_size;
      r = TransferRequest{spec.op, t.local + offset, t.peer, t.remote + offset, spec.block_size};
    }
    auto batch = t.transport->Submit(requests);
    if (!batch.ok()) {
      out->status = batch.status();
      return;
    }
    inflight.push_back({std::move(*batch), now});
    if (inflight.size() >= spec.depth) {
      if (!finish_oldest()) return;
    } else {
      now = clock.Now();  // filling the window: this batch's start is the next one's
    }
  }
  while (!inflight.empty()) {
    if (!finish_oldest()) return;
  }
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(p * (sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

// Runs all threads for `duration`; returns the merged outcome.
Result<ThreadOutcome> Timed(const CaseSpec& spec, const Target& t, size_t slots, Nanos duration,
                            bool record, double* seconds) {
  const Clock& clock = BenchClock();
  const Nanos start = clock.Now();
  const Nanos end = start + duration;
  std::vector<ThreadOutcome> outcomes(spec.threads);
  std::vector<std::thread> threads;
  const size_t per_thread = std::max<size_t>(1, slots / spec.threads);
  for (int i = 0; i < spec.threads; ++i) {
    threads.emplace_back(
        [&, i] { Loop(spec, t, slots, i * per_thread, end, record, &outcomes[i]); });
  }
  for (auto& th : threads) th.join();
  ThreadOutcome merged;
  for (auto& o : outcomes) {
    if (!o.status.ok()) return o.status;
    merged.batches += o.batches;
    merged.last_done = std::max(merged.last_done, o.last_done);
    merged.latencies_us.insert(merged.latencies_us.end(), o.latencies_us.begin(),
                               o.latencies_us.end());
  }
  *seconds = (merged.last_done - start).count() / 1e9;
  return merged;
}

}  // namespace

Result<CaseResult> RunCase(const CaseSpec& spec, const Target& t) {
  if (spec.block_size == 0 || spec.block_size > t.footprint) {
    return InvalidArgument("block size must be between 1 byte and the buffer footprint");
  }
  const size_t slots = t.footprint / spec.block_size;
  CaseResult r;
  r.label = spec.label;
  r.op = spec.op == OpKind::kRead ? "read" : "write";
  r.block_size = spec.block_size;
  r.batch_size = spec.batch_size;
  r.depth = spec.depth;
  r.threads = spec.threads;

  Status v = VerifySlot(t, 0, spec.block_size, spec.timeout);
  if (v.ok() && slots > 1)
    v = VerifySlot(t, (slots - 1) * spec.block_size, spec.block_size, spec.timeout);
  if (!v.ok()) return v.WithContext("verification before timing");

  double ignored = 0;
  if (spec.warmup.count() > 0) {
    auto w = Timed(spec, t, slots, spec.warmup, false, &ignored);
    if (!w.ok()) return w.status().WithContext("warm-up");
  }
  auto m = Timed(spec, t, slots, spec.duration, true, &r.seconds);
  if (!m.ok()) return m.status().WithContext("timed loop");

  // The timed loop moved pattern bytes only; check the target still holds them.
  v = ReadAndCheck(t, 0, spec.block_size, t.remote_seed, spec.timeout, "after timing");
  if (v.ok() && slots > 1) {
    v = ReadAndCheck(t, (slots - 1) * spec.block_size, spec.block_size, t.remote_seed, spec.timeout,
                     "after timing");
  }
  if (!v.ok()) return v.WithContext("verification after timing");
  r.verified = "yes";

  r.requests = m->batches * spec.batch_size;
  r.bytes = r.requests * spec.block_size;
  if (r.seconds > 0) {
    r.gbps = r.bytes / r.seconds / 1e9;
    r.requests_per_s = r.requests / r.seconds;
  }
  std::sort(m->latencies_us.begin(), m->latencies_us.end());
  r.p50_us = Percentile(m->latencies_us, 0.50);
  r.p99_us = Percentile(m->latencies_us, 0.99);
  r.p999_us = Percentile(m->latencies_us, 0.999);
  return r;
}

}  // namespace mooncake::bench
