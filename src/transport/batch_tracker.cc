#include "transport/batch_tracker.h"

#include <algorithm>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace mooncake::transport {

BatchTracker::BatchTracker(std::span<const TransferRequest> requests)
    : size_(requests.size()),
      requests_(&one_request_),
      per_request_(&one_per_request_),
      pending_requests_(requests.size()) {
  if (size_ == 1) {
    one_request_ = requests[0];
  } else if (size_ > 1) {
    many_requests_.reset(new TransferRequest[size_]);
    many_per_request_.reset(new PerRequest[size_]);
    std::copy(requests.begin(), requests.end(), many_requests_.get());
    requests_ = many_requests_.get();
    per_request_ = many_per_request_.get();
  }
}

namespace {
// Blocks of one type (e.g. a tracker with its shared_ptr control block, allocated together),
// kept per thread. A block freed on another thread (a completion callback) joins that thread's
// list.
struct FreeBlocks {
  std::vector<void*> blocks;
  ~FreeBlocks() {
    for (void* b : blocks) ::operator delete(b);
  }
};
constexpr size_t kMaxFreeBlocks = 64;

template <typename T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT(google-explicit-constructor): rebinding
  static FreeBlocks& List() {
    thread_local FreeBlocks list;
    return list;
  }
  T* allocate(size_t n) {
    FreeBlocks& l = List();
    if (n == 1 && !l.blocks.empty()) {
      void* p = l.blocks.back();
      l.blocks.pop_back();
      return static_cast<T*>(p);
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    FreeBlocks& l = List();
    if (n == 1 && l.blocks.size() < kMaxFreeBlocks) {
      l.blocks.push_back(p);
      return;
    }
    ::operator delete(p);
  }
  template <typename U>
  bool operator==(const PoolAllocator<U>&) const {
    return true;
  }
};
}  // namespace

std::shared_ptr<BatchTracker> BatchTracker::Make(std::span<const TransferRequest> requests) {
  return std::allocate_shared<BatchTracker>(PoolAllocator<BatchTracker>(), requests);
}

void BatchTracker::SetSlices(size_t index, uint32_t slices) {
  per_request_[index].slices_left.store(slices, std::memory_order_relaxed);
  if (slices == 0) pending_requests_.fetch_sub(1, std::memory_order_acq_rel);
}

void BatchTracker::CompleteSlice(size_t index, const Status& status) {
  PerRequest& r = per_request_[index];
  if (!status.ok() && !r.failed.exchange(true)) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (!errors_) errors_.reset(new Status[size_]);
    errors_[index] = status;
    any_failed_.store(true, std::memory_order_release);
  }
  if (r.slices_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    pending_requests_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void BatchTracker::FailRemaining(size_t index, uint32_t not_posted, const Status& status) {
  for (uint32_t i = 0; i < not_posted; ++i) CompleteSlice(index, status);
}

BatchState BatchTracker::state() const {
  if (!done()) return BatchState::kInProgress;
  for (size_t i = 0; i < size_; ++i) {
    if (per_request_[i].failed.load(std::memory_order_acquire)) return BatchState::kFailed;
  }
  return BatchState::kCompleted;
}

std::vector<Status> BatchTracker::RequestStatus() const {
  std::vector<Status> out(size_);
  std::lock_guard<std::mutex> lock(error_mutex_);
  for (size_t i = 0; i < size_; ++i) {
    if (per_request_[i].failed.load(std::memory_order_acquire)) {
      out[i] = errors_ ? errors_[i] : Status::Ok();  // null: the failure is being recorded
    } else if (per_request_[i].slices_left.load(std::memory_order_acquire) != 0) {
      out[i] = Status(ErrorCode::kBusy, "in progress");
    }
  }
  return out;
}

Status BatchTracker::FirstError() const {
  if (!any_failed_.load(std::memory_order_acquire)) return Status::Ok();
  std::lock_guard<std::mutex> lock(error_mutex_);
  for (size_t i = 0; i < size_; ++i) {
    if (per_request_[i].failed.load(std::memory_order_acquire))
      return errors_ ? errors_[i] : Status::Ok();
  }
  return Status::Ok();
}

void* SharedBatch::operator new(size_t size) {
  if (size == sizeof(SharedBatch)) return PoolAllocator<SharedBatch>().allocate(1);
  return ::operator new(size);
}

void SharedBatch::operator delete(void* p, size_t size) {
  if (size == sizeof(SharedBatch)) {
    PoolAllocator<SharedBatch>().deallocate(static_cast<SharedBatch*>(p), 1);
  } else {
    ::operator delete(p);
  }
}

BatchState SharedBatch::Poll() {
  if (!state_->done() && driver_) driver_->Progress();
  return state_->state();
}

namespace {

// The ranks that requests still in progress wait on, as "1, 3".
std::string PendingPeers(const BatchTracker& state, const Transport* dead_only) {
  std::set<int32_t> peers;
  auto statuses = state.RequestStatus();
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (statuses[i].code() != ErrorCode::kBusy) continue;
    const Rank peer = state.requests()[i].peer;
    if (dead_only == nullptr || dead_only->PeerDead(peer)) peers.insert(peer.value);
  }
  std::string names;
  for (int32_t p : peers) names += (names.empty() ? "" : ", ") + std::to_string(p);
  return names;
}

}  // namespace

Status SharedBatch::Wait(Nanos timeout) {
  // Fast path (one small request on shared memory completes inside Submit): no clock read.
  if (state_->done()) return state_->FirstError();
  SteadyClock clock;
  const Nanos deadline = clock.Now() + timeout;
  // A peer declared dead never completes a one-sided request over shared memory: look for one
  // now and then while idle, so the caller falls back (another replica) instead of timing out.
  constexpr Nanos kDeadPeerCheck = std::chrono::milliseconds(2);
  Nanos next_dead_check = clock.Now() + kDeadPeerCheck;
  uint32_t idle_rounds = 0;
  CallerProgressScope scope(driver_);
  while (!state_->done()) {
    bool progressed = driver_ ? driver_->Progress() : false;
    if (state_->done()) break;
    const Nanos now = clock.Now();
    if (now > deadline) {
      return Timeout("transfer batch not finished after " +
                     std::to_string(timeout.count() / 1000000) + " ms; waiting on rank(s) " +
                     PendingPeers(*state_, nullptr));
    }
    if (driver_ && !progressed && now > next_dead_check) {
      next_dead_check = now + kDeadPeerCheck;
      const std::string dead = PendingPeers(*state_, driver_);
      if (!dead.empty()) {
        return PeerFailure("transfer abandoned: rank(s) " + dead + " declared dead");
      }
    }
    // Spin while the backend makes progress; yield the core when it does not, so oversubscribed
    // ranks (tests run 6 ranks on 2 cores) let the peer we wait on run.
    if (progressed) {
      idle_rounds = 0;
    } else if (++idle_rounds > 64) {
      std::this_thread::yield();
    }
  }
  return state_->FirstError();
}

}  // namespace mooncake::transport
