#include "http/connection_pool.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "common/threads.h"

namespace mooncake::http {

struct ConnectionPool::State {
  size_t max_threads;
  std::chrono::milliseconds idle_exit;
  mutable std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<void()>> tasks;
  std::map<uint64_t, std::thread> threads;  // by id; a finished one stays until joined
  std::vector<uint64_t> finished;           // ended, not yet joined
  uint64_t next_id = 0;
  size_t idle = 0, alive = 0, peak = 0;
  bool stopping = false;

  // Caller holds mutex. The threads that ended, out of `threads`, for the caller to join.
  std::vector<std::thread> TakeFinished() {
    std::vector<std::thread> out;
    for (uint64_t id : finished) {
      auto it = threads.find(id);
      out.push_back(std::move(it->second));
      threads.erase(it);
    }
    finished.clear();
    return out;
  }

  void Work(uint64_t id) {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      ++idle;
      const bool woken = cv.wait_for(lock, idle_exit, [&] { return stopping || !tasks.empty(); });
      --idle;
      if (tasks.empty()) {
        if (stopping || !woken) break;
        continue;
      }
      std::function<void()> task = std::move(tasks.front());
      tasks.pop_front();
      lock.unlock();
      task();
      task = nullptr;  // what it holds goes before the lock is taken again
      lock.lock();
    }
    --alive;
    finished.push_back(id);
  }
};

ConnectionPool::ConnectionPool(size_t max_threads, std::chrono::milliseconds idle_exit)
    : state_(std::make_unique<State>()) {
  state_->max_threads = std::max<size_t>(1, max_threads);
  state_->idle_exit = idle_exit;
}

ConnectionPool::~ConnectionPool() { Shutdown(); }

void ConnectionPool::Enqueue(std::function<void()> task) {
  State& s = *state_;
  std::vector<std::thread> ended;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.tasks.push_back(std::move(task));
    if (s.idle < s.tasks.size() && s.alive < s.max_threads) {
      const uint64_t id = s.next_id++;
      ++s.alive;
      s.peak = std::max(s.peak, s.alive);
      s.threads.emplace(id, std::thread([&s, id] { s.Work(id); }));
    }
    ended = s.TakeFinished();
  }
  s.cv.notify_one();
  for (std::thread& t : ended) t.join();
}

void ConnectionPool::Shutdown() {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.stopping = true;
  }
  s.cv.notify_all();
  for (;;) {
    std::map<uint64_t, std::thread> all;
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (s.threads.empty()) return;
      all.swap(s.threads);
      s.finished.clear();
    }
    for (auto& [id, t] : all) t.join();
  }
}

size_t ConnectionPool::threads() const { return CopyLocked(state_->mutex, state_->alive); }

size_t ConnectionPool::threads_peak() const { return CopyLocked(state_->mutex, state_->peak); }

}  // namespace mooncake::http
