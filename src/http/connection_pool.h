#pragma once

// The threads that serve the HTTP server's connections. cpp-httplib runs each connection as one
// task from accept to close, its idle time included (it waits up to the read deadline for every
// request, the first too). A fixed pool therefore lets idle connections hold every thread while
// requests queue behind them until those time out; this pool starts a thread whenever a task
// finds none free, up to `max_threads` (then tasks queue), and a thread that found no work for
// `idle_exit` ends. Only the HTTP server includes <httplib.h>: the pool is seen through this
// seam.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

namespace mooncake::http {

class ConnectionPool {
 public:
  ConnectionPool(size_t max_threads, std::chrono::milliseconds idle_exit);
  ~ConnectionPool();  // Shutdown()
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Any thread. Runs `task` on a free thread, a new one, or (at max_threads) the next to free.
  void Enqueue(std::function<void()> task);
  // Runs the tasks still queued, then joins every thread. Idempotent; Enqueue must not follow.
  void Shutdown();
  size_t threads() const;       // alive now
  size_t threads_peak() const;  // the most alive at once

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mooncake::http
