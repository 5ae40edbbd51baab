// What the classes with worker threads share: a worker takes the next item of its queue until the
// queue is closed, Stop() raises the flag the workers look for, then joins them, and a getter
// copies what the workers write under the lock they write it under.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace mooncake {

// Sets `flag` under `mutex` and wakes every waiter of `cv` (they test the flag under the same
// mutex, so none sleeps through it). False when the flag was set already: a second Stop().
inline bool RaiseFlag(std::mutex& mutex, bool& flag, std::condition_variable& cv) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (flag) return false;
    flag = true;
  }
  cv.notify_all();
  return true;
}

// A copy of `value` read under `mutex`: the body of a getter of state that another thread writes
// under that mutex. `value` is a reference, so nothing of it is read before the lock is held.
template <typename T>
T CopyLocked(std::mutex& mutex, const T& value) {
  std::lock_guard<std::mutex> lock(mutex);
  return value;
}

// Joins each of `threads` that was started and not joined yet, in order.
template <typename... Threads>
void JoinAll(Threads&... threads) {
  auto join = [](std::thread& t) {
    if (t.joinable()) t.join();
  };
  (join(threads), ...);
}

// A worker's next item: waits on `cv` under `mutex` until `queue` holds one or `closed` is set,
// and pops it. Empty once `closed` is set and the queue is drained (the worker leaves).
template <typename T>
std::optional<T> NextOrClosed(std::mutex& mutex, std::condition_variable& cv, std::deque<T>& queue,
                              const bool& closed) {
  std::unique_lock<std::mutex> lock(mutex);
  cv.wait(lock, [&] { return closed || !queue.empty(); });
  if (queue.empty()) return std::nullopt;
  std::optional<T> next(std::move(queue.front()));
  queue.pop_front();
  return next;
}

}  // namespace mooncake
