// Completion bookkeeping shared by the backends: a batch of N requests, each cut into slices;
// a request completes when all its slices have, and fails with the first slice error.
// Completion callbacks may arrive on any thread.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "transport/transport.h"

namespace mooncake::transport {

class BatchTracker {
 public:
  // Copies `requests`. A batch of one request (a latency-bound get) is stored inline: no heap
  // allocation besides the tracker itself.
  explicit BatchTracker(std::span<const TransferRequest> requests);

  // Declares that request `index` is made of `slices` slices (call before any completion).
  void SetSlices(size_t index, uint32_t slices);
  // Records one finished slice of request `index`.
  void CompleteSlice(size_t index, const Status& status);
  // Fails every slice not yet posted of request `index` (posting stopped early).
  void FailRemaining(size_t index, uint32_t not_posted, const Status& status);

  // A tracker for `requests`, allocated from a per-thread free list (one Submit makes one; at
  // millions of 4 KiB reads per second malloc/free showed in the profile).
  static std::shared_ptr<BatchTracker> Make(std::span<const TransferRequest> requests);

  BatchState state() const;
  std::vector<Status> RequestStatus() const;
  std::span<const TransferRequest> requests() const { return {requests_, size_}; }
  bool done() const { return pending_requests_.load(std::memory_order_acquire) == 0; }
  Status FirstError() const;

 private:
  struct PerRequest {
    std::atomic<uint32_t> slices_left{0};
    std::atomic<bool> failed{false};
  };
  size_t size_;
  TransferRequest one_request_{};  // storage when size_ == 1
  PerRequest one_per_request_;
  std::unique_ptr<TransferRequest[]> many_requests_;  // storage when size_ > 1
  std::unique_ptr<PerRequest[]> many_per_request_;
  TransferRequest* requests_;  // one_request_ or many_requests_
  PerRequest* per_request_;    // one_per_request_ or many_per_request_
  std::atomic<size_t> pending_requests_;
  std::atomic<bool> any_failed_{false};  // set (after errors_) by the first failure
  mutable std::mutex error_mutex_;
  // Guarded by error_mutex_; allocated at the first failure (most batches never fail, and a
  // 4 KiB read is short enough that one allocation per batch shows in its latency).
  std::unique_ptr<Status[]> errors_;
};

// A TransferBatch over a shared BatchTracker. When `driver` is set, Poll and Wait call its
// Progress() (the waiter does the backend's work itself) inside a CallerProgressScope; the
// transport outlives its batches.
class SharedBatch final : public TransferBatch {
 public:
  SharedBatch(std::shared_ptr<BatchTracker> state, Transport* driver)
      : state_(std::move(state)), driver_(driver) {}
  // Batches are created and destroyed once per Submit (millions per second for 4 KiB reads):
  // a small per-thread free list replaces malloc/free.
  static void* operator new(size_t size);
  static void operator delete(void* p, size_t size);
  BatchState Poll() override;
  Status Wait(Nanos timeout) override;
  std::vector<Status> RequestStatus() const override { return state_->RequestStatus(); }
  size_t size() const override { return state_->requests().size(); }

 private:
  std::shared_ptr<BatchTracker> state_;
  Transport* driver_;
};

}  // namespace mooncake::transport
