#include "common/periodic_thread.h"

#include <utility>

#include "common/threads.h"

namespace mooncake {

PeriodicThread::~PeriodicThread() { Stop(); }

void PeriodicThread::Start(Nanos interval, First first, std::function<bool()> tick) {
  interval_ = interval;
  first_ = first;
  tick_ = std::move(tick);
  thread_ = std::thread([this] { Run(); });
}

void PeriodicThread::Wake() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    woken_ = true;
  }
  cv_.notify_all();
}

void PeriodicThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool PeriodicThread::stopping() const { return CopyLocked(mutex_, stopping_); }

bool PeriodicThread::Wait(std::unique_lock<std::mutex>& lock) {
  auto done = [this] { return stopping_ || woken_; };
  if (interval_ == kOnlyWhenWoken) {
    cv_.wait(lock, done);
  } else {
    cv_.wait_for(lock, interval_, done);
  }
  woken_ = false;
  return !stopping_;
}

void PeriodicThread::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (first_ == First::kWait && !Wait(lock)) return;
  while (!stopping_) {
    lock.unlock();
    const bool more = tick_();
    lock.lock();
    if (!more || !Wait(lock)) return;
  }
}

}  // namespace mooncake
