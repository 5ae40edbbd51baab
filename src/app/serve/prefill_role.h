// A prefill rank: a FIFO of PrefillTasks from the conductor, served by one worker thread (one
// instance computes one prefill at a time, as a GPU would). Per task:
//  1. offer the request's KV to its decode rank, which answers with a slot in its receive buffer;
//  2. read the reused prefix blocks from the store and verify them (a block the store no longer
//     has is recomputed); the fetched part is paced to the modelled transfer time;
//  3. "compute" chunk by chunk for the cost model's time / time_scale; after each chunk, write
//     the finished blocks to the store (two-phase put) and stream them to the decode slot;
//  4. tell the conductor (PrefillDone, the first token) and, once the modelled KV transfer would
//     have finished, the decode rank (KvDone).
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "app/serve/messages.h"
#include "app/serve/serve_context.h"

namespace mooncake::app::serve {

struct PrefillStats {
  uint64_t tasks = 0, blocks_loaded = 0, blocks_missing = 0, blocks_computed = 0;
  uint64_t store_put_failures = 0, errors = 0;
  std::string first_error;
};

class PrefillRole {
 public:
  explicit PrefillRole(ServeContext& ctx);
  ~PrefillRole();
  // Registers the task handler; call before the bootstrap barrier that precedes traffic.
  void Start();
  // Finishes the queued tasks (bounded by `timeout`) and joins the threads.
  void Stop();
  PrefillStats stats() const;

 private:
  void WorkLoop();
  void SendLoop();
  void Serve(const PrefillTask& task);
  // Reads prefix blocks [0, task.prefix_blocks) into `staging`; returns how many leading blocks
  // were present and verified (the rest must be recomputed).
  int LoadPrefix(const PrefillTask& task, std::span<std::byte> staging, uint64_t* bytes);
  // Puts blocks [from, to) of `staging` into the store; returns bytes written.
  uint64_t StoreBlocks(const PrefillTask& task, std::span<std::byte> staging, int from, int to);
  void Fail(const Status& s);

  ServeContext& ctx_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<PrefillTask> queue_;
  // KvDone messages held until their modelled arrival time (local wall clock).
  struct Outgoing {
    Nanos due;
    int32_t decode_rank;
    KvDone done;
  };
  std::deque<Outgoing> outbox_;
  bool stopping_ = false;
  PrefillStats stats_;
  std::thread worker_, sender_;
};

}  // namespace mooncake::app::serve
