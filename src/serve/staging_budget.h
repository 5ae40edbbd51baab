// StagingBudget: the prefill rank's KV staging memory, bounded by config.prefill_staging and
// allocated through the engine (host memory for the cost model, device memory for a CUDA one).
//
// A staging buffer can outlive the role that acquired it: a transfer that did not finish (a
// stalled store or decode rank) may still read or write it, so it is handed to the transport,
// which frees it when it closes (Transport::RetainUntilClosed), after the role is gone. Hence
// the budget is a shared object each buffer keeps alive, never a member of the role.
//
// A retired buffer (Retire) stops counting against the budget at once: it is no longer in the
// pipeline's use, and a budget that only ever shrank would stall the rank for good once enough
// transfers had been abandoned.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

#include "engine/engine.h"

namespace mooncake::serve {

class StagingBudget;

// One staging buffer, owning its memory; the budget is charged until the buffer is retired or
// destroyed, whichever comes first.
class StagingBuffer {
 public:
  StagingBuffer(std::shared_ptr<StagingBudget> budget, std::unique_ptr<engine::KvMemory> memory);
  ~StagingBuffer();
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;

  std::span<std::byte> bytes() const { return memory_->bytes(); }
  // Gives the buffer's share back to the budget; the memory stays until the last owner drops it.
  void Retire();

 private:
  std::unique_ptr<engine::KvMemory> memory_;
  std::shared_ptr<StagingBudget> budget_;
  uint64_t size_;
  std::atomic<bool> charged_{true};
};

class StagingBudget : public std::enable_shared_from_this<StagingBudget> {
 public:
  explicit StagingBudget(uint64_t limit) : limit_(limit) {}
  // A buffer of `size` bytes from `engine`; waits while the budget is spent (unless nothing is
  // charged, so one request larger than the whole budget still runs), then allocates.
  std::shared_ptr<StagingBuffer> Acquire(uint64_t size, engine::Engine& engine);
  uint64_t high_water() const;
  uint64_t retired_bytes() const;  // memory abandoned to unfinished transfers so far

 private:
  friend class StagingBuffer;
  void Release(uint64_t size, bool retired);

  const uint64_t limit_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  uint64_t charged_ = 0, high_water_ = 0, retired_ = 0;
};

}  // namespace mooncake::serve
