// A prefill rank: a FIFO of PrefillTasks from the conductor, served by one worker thread (one
// instance computes one prefill at a time, as a GPU would). Per task:
//  1. read the reused prefix blocks from the store and verify them (a block the store no longer
//     has is recomputed). A loader thread does this ahead of the compute, as a server prefetches
//     the next request's prefix while the GPU works; the compute then spends only the modelled
//     transfer time of the fetched part, so the live run's timing is the model's;
//  2. compute chunk by chunk through the Engine (engine/engine.h; CostModelEngine: its KV bytes
//     and the cost model's time / time_scale); each finished chunk's blocks are handed to the
//     writer thread. An engine that computes layer by layer (the reference engine, unless
//     ServeConfig::kv_stream_layers is off) hands each layer of the chunk's finished blocks to
//     the writer as soon as it is computed, so it travels to the decode rank while the next
//     layers compute. A computing engine's new blocks go to the store whole after the
//     request's KvDone. Staging is allocated through the engine too (where it keeps KV);
//  3. tell the conductor the first token came (PrefillDone) the moment the compute ends.
// The writer thread, off the compute path as a GPU's copy engine would be: offers the request's
// KV to its decode rank (which answers with a slot in its receive buffer), puts the new blocks
// into the store (two-phase put), streams every block (or layer piece) to the decode slot, and
// sends KvDone once every write finished and the modelled layer-wise KV transfer would have.
// Checksums are of whole blocks, taken from the staging once the chunk's every layer is there:
// the decode rank verifies each block after KvDone, so a layer missing, misplaced or stale
// fails its block.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "serve/messages.h"
#include "serve/serve_context.h"
#include "serve/staging_budget.h"

namespace mooncake::serve {

struct PrefillStats {
  uint64_t tasks = 0, blocks_loaded = 0, blocks_missing = 0, blocks_computed = 0;
  uint64_t store_put_failures = 0, errors = 0;
  uint64_t peer_loss_aborts = 0;          // work dropped because a peer was declared dead
  uint64_t staging_high_water_bytes = 0;  // the most KV staging held at once
  // Staging left to transfers that had not stopped when they were given up (a stalled store or
  // decode rank): kept until the transport closes, so a late write cannot land in freed memory.
  uint64_t staging_retired_bytes = 0;
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
  static constexpr int kWholeBlocks = -1;
  // Work for the writer thread: blocks [from, to) of a request to its decode rank (whole, or one
  // layer's piece of each) and/or to the store, or (last) its KvDone, due at a local wall time.
  struct WriteJob {
    std::shared_ptr<const PrefillTask> task;
    std::shared_ptr<StagingBuffer> staging;
    int from = 0, to = 0;
    bool to_decode = false;
    int layer = kWholeBlocks;  // else only this layer's piece of each block goes to decode
    bool to_store = false;     // new blocks: those StorableBlocks allows go to the store
    bool swap_kv = false;      // fault.swap_kv: blocks from and from + 1 land in each other's place
    bool last = false;
    Nanos due{0};
    int64_t first_token_wall_ns = 0;
    int64_t prefill_start_wall_ns = 0;  // when the worker took the request (conductor clock)
    // Checksum64 of each block of the request, taken by the worker where the KV was computed or
    // read back (filled before the job naming those blocks is queued); the last job sends them.
    std::shared_ptr<std::vector<uint64_t>> checksums;
    int32_t first_token = engine::kNoToken;
  };
  // A task whose prefix was loaded by the loader thread.
  struct Loaded {
    std::shared_ptr<const PrefillTask> task;
    std::shared_ptr<StagingBuffer> staging;
    int present = 0;
    uint64_t bytes_loaded = 0;
  };
  // A request on the worker thread, from its loaded prefix to its KvDone.
  struct Run {
    std::shared_ptr<const PrefillTask> task;
    std::shared_ptr<StagingBuffer> staging;
    std::shared_ptr<std::vector<uint64_t>> checksums;  // Checksum64 of each block
    int blocks = 0;
    int stored_blocks = 0;    // leading blocks handed to the writer
    int64_t done_tokens = 0;  // prompt tokens whose KV is computed or loaded
    int32_t first_token = engine::kNoToken;
    double compute_model_s = 0;
    Nanos start{0}, compute_start{0}, chunk_end{0};
    // A computing engine's store puts, queued after KvDone so the decode rank does not wait.
    std::vector<WriteJob> store_after;
  };
  void TakeChecksums(Run& run, int from, int to) const;
  // false: the engine failed (reported).
  bool ComputeChunk(Run& run);
  void ReportFailed(const PrefillTask& task);
  // PrefillDone to the conductor; returns its first_token_wall_ns.
  int64_t SendPrefillDone(const Run& run, const Loaded& loaded, Nanos first_token_at);
  void QueueKvDone(Run& run, int64_t first_token_wall_ns, Nanos first_token_at);
  void LoadLoop();
  void WorkLoop();
  void SendLoop();
  void Write(WriteJob& job);
  void OfferSlot(const PrefillTask& task);
  void WriteToDecode(WriteJob& job);
  void FinishRequest(const WriteJob& job, bool to_decode);
  void Serve(Loaded loaded);
  void Enqueue(WriteJob job);
  static WriteJob BlocksJob(std::shared_ptr<const PrefillTask> task,
                            std::shared_ptr<StagingBuffer> staging, int from, int to,
                            bool to_decode, bool to_store, bool swap_kv = false);
  // The writes of one job to the decode rank's slot, one request per block unless whole
  // blocks go unswapped (one request).
  std::vector<transport::TransferRequest> DecodeWrites(const WriteJob& job) const;
  // Reads prefix blocks [0, task.prefix_blocks) into `*staging`; returns how many leading blocks
  // were present and verified (the rest must be recomputed). When a read was given up while
  // still in flight, `*staging` is replaced by a fresh buffer (RetireStaging).
  int LoadPrefix(const PrefillTask& task, std::shared_ptr<StagingBuffer>* staging, uint64_t* bytes);
  // Hands `*staging` to the transport until it closes and replaces it with a fresh buffer holding
  // a copy of its first `copy_blocks` blocks; of those, the first `verify_blocks` (verified once
  // already) are verified again in the copy, since a late write may have landed in the old
  // buffer in between. Returns how many leading blocks still verify.
  int RetireStaging(const PrefillTask& task, std::shared_ptr<StagingBuffer>* staging,
                    int copy_blocks, int verify_blocks);
  // Puts blocks [from, to) of `staging` into the store; returns bytes written. `*unfinished`:
  // a put ran out of time, so UCX may still read `staging` (it must outlive the transport).
  uint64_t StoreBlocks(const PrefillTask& task, std::span<std::byte> staging, int from, int to,
                       bool* unfinished);
  void Fail(const Status& s);
  // Blocks of the request the store may hold: all of them for a modelled engine; for one that
  // computes, the prompt's whole blocks (a partial last block's tokens depend on its length, so
  // its KV is not that of the same hash id in a longer prompt).
  int StorableBlocks(const PrefillTask& task) const;
  // fault.swap_kv: true for the first chunk that completes two new blocks [from, to): their KV
  // goes to each other's place at the decode rank (the checksums and the store have the right
  // bytes), which the decode rank must refuse.
  bool ClaimSwapKv(const PrefillTask& task, int from, int to);

  ServeContext& ctx_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<const PrefillTask>> queue_;
  std::deque<Loaded> loaded_;  // at most kLoadAhead waiting for the compute
  static constexpr size_t kLoadAhead = 2;
  bool loader_done_ = false;
  std::deque<WriteJob> outbox_;
  // Writer-thread state of the request being streamed.
  uint64_t writing_request_ = UINT64_MAX;
  uint64_t slot_ = 0;
  bool slot_ok_ = false;
  uint64_t skip_layer_request_ = UINT64_MAX;  // ServeConfig::fault_skip_kv_layer's request
  // A KV write and the staging it reads. One that did not complete (a decode rank stalled past
  // the deadline) may still be read by UCX: RetireWrites hands it to the transport, which keeps
  // it until it closes (Transport::RetainUntilClosed); freeing it was a use-after-free.
  struct PendingWrite {
    std::unique_ptr<transport::TransferBatch> batch;
    std::shared_ptr<StagingBuffer> staging;
  };
  void RetireWrites();
  std::vector<PendingWrite> writes_;
  bool stopping_ = false;
  PrefillStats stats_;
  bool swapped_kv_ = false;  // fault.swap_kv done (worker thread)
  // Shared with every buffer, since the transport may free one after this role is gone.
  std::shared_ptr<StagingBudget> staging_budget_;
  std::thread loader_, worker_, sender_;
};

}  // namespace mooncake::serve
