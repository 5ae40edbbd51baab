#include "serve/prefill_role.h"

#include <algorithm>
#include <cstring>

#include "common/checksum.h"
#include "common/log.h"
#include "common/threads.h"
#include "serve/role_failure.h"
#include "trace/trace_request.h"

namespace mooncake::serve {
namespace {
constexpr int kTokensPerBlock = trace::kTraceBlockTokens;
}  // namespace

PrefillRole::PrefillRole(ServeContext& ctx)
    : ctx_(ctx), staging_budget_(std::make_shared<StagingBudget>(ctx.config.prefill_staging)) {}

PrefillRole::~PrefillRole() { Stop(); }

void PrefillRole::Start() {
  transport::CheckRegistered(ctx_.rpc.Register(
      kMsgPrefillTask, [this](Rank from, std::span<const std::byte> bytes, transport::Responder) {
        auto task = PrefillTask::Decode(bytes);
        if (!task.ok()) {
          Fail(task.status().WithContext("task from rank " + std::to_string(from.value)));
          return;
        }
        {
          std::lock_guard<std::mutex> lock(mutex_);
          queue_.push_back(std::make_shared<const PrefillTask>(std::move(*task)));
        }
        cv_.notify_all();
      }));
  loader_ = std::thread([this] { LoadLoop(); });
  worker_ = std::thread([this] { WorkLoop(); });
  sender_ = std::thread([this] { SendLoop(); });
}

void PrefillRole::Stop() {
  if (RaiseFlag(mutex_, stopping_, cv_)) JoinAll(loader_, worker_, sender_);
}

PrefillStats PrefillRole::stats() const {
  PrefillStats s;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    s = stats_;
  }
  s.staging_high_water_bytes = staging_budget_->high_water();
  s.staging_retired_bytes = staging_budget_->retired_bytes();
  return s;
}

void PrefillRole::Fail(const Status& s) { CountRoleFailure(s, mutex_, &stats_); }

void PrefillRole::LoadLoop() {
  for (;;) {
    std::shared_ptr<const PrefillTask> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] {
        return (stopping_ && queue_.empty()) || (!queue_.empty() && loaded_.size() < kLoadAhead);
      });
      if (queue_.empty()) {
        loader_done_ = true;
        cv_.notify_all();
        return;  // stopping and drained
      }
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    Loaded l{
        task,
        staging_budget_->Acquire(task->hash_ids.size() * ctx_.layout.block_bytes(), *ctx_.engine),
        0, 0};
    l.present = LoadPrefix(*task, &l.staging, &l.bytes_loaded);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      loaded_.push_back(std::move(l));
    }
    cv_.notify_all();
  }
}

void PrefillRole::WorkLoop() {
  // Until the loader finished and everything was computed.
  while (std::optional<Loaded> l = NextOrClosed(mutex_, cv_, loaded_, loader_done_)) {
    cv_.notify_all();  // room for the loader to fetch ahead
    Serve(std::move(*l));
  }
}

void PrefillRole::Enqueue(WriteJob job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    outbox_.push_back(std::move(job));
  }
  cv_.notify_all();
}

void PrefillRole::RetireWrites() {
  for (PendingWrite& w : writes_) {
    if (w.batch->Poll() != transport::BatchState::kCompleted) {
      w.staging->Retire();
      ctx_.transport.RetainUntilClosed(std::make_shared<PendingWrite>(std::move(w)));
    }
  }
  writes_.clear();
}

void PrefillRole::SendLoop() {
  // Until stopping and drained.
  while (std::optional<WriteJob> job = NextOrClosed(mutex_, cv_, outbox_, stopping_)) Write(*job);
}

// Gets the request's slot in the decode rank's receive buffer (retrying while it is full).
void PrefillRole::OfferSlot(const PrefillTask& task) {
  KvOffer offer;
  offer.request = task.request;
  offer.attempt = task.attempt;
  offer.bytes = task.hash_ids.size() * ctx_.layout.block_bytes();
  const Nanos give_up = ctx_.LocalNow() + ctx_.config.phase_timeout;
  for (;;) {
    auto reply =
        ctx_.rpc.Call(Rank{task.decode_rank}, kMsgKvOffer, offer.Encode(), ctx_.config.rpc_timeout);
    if (reply.ok()) {
      auto r = KvOfferReply::Decode(*reply);
      if (r.ok()) {
        slot_ = r->remote_addr;
        slot_ok_ = true;
      } else {
        Fail(r.status());
      }
      return;
    }
    // Busy: the receive buffer is full until requests there finish. Timeout: the decode rank
    // answered late (a loaded machine), and asked again it gives the same slot; given up, the
    // request would wait for the job deadline.
    const ErrorCode code = reply.status().code();
    if ((code != ErrorCode::kBusy && code != ErrorCode::kTimeout) || ctx_.LocalNow() > give_up) {
      Fail(reply.status().WithContext("KV offer for request " + std::to_string(task.request)));
      return;
    }
    if (code == ErrorCode::kTimeout) {
      log::Warn(
          "request {}: no answer to its KV offer from decode rank {} within {} ms; asking "
          "again",
          task.request, task.decode_rank, ctx_.config.rpc_timeout.count() / 1'000'000);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

void PrefillRole::WriteToDecode(WriteJob& job) {
  const PrefillTask& task = *job.task;
  if (job.layer != kWholeBlocks && job.layer == ctx_.config.fault_skip_kv_layer) {
    if (skip_layer_request_ == UINT64_MAX) skip_layer_request_ = task.request;
    if (skip_layer_request_ == task.request) {
      log::Warn("fault: request {}: layer {} of blocks [{}, {}) not written to the decode rank",
                task.request, job.layer, job.from, job.to);
      return;
    }
  }
  const std::vector<transport::TransferRequest> w = DecodeWrites(job);
  auto batch = ctx_.transport.Submit(w);
  if (batch.ok()) {
    writes_.push_back(PendingWrite{std::move(*batch), job.staging});
  } else {
    Fail(batch.status());
  }
}

void PrefillRole::Write(WriteJob& job) {
  const PrefillTask& task = *job.task;
  const bool to_decode = task.output_length > 1 && !task.hash_ids.empty();
  // A store put left for after KvDone needs no slot.
  if (writing_request_ != task.request && (job.to_decode || job.last)) {
    writing_request_ = task.request;  // a new request
    RetireWrites();
    slot_ok_ = false;
    if (to_decode) OfferSlot(task);
  }
  std::span<std::byte> staging(job.staging->bytes());
  const int store_to = job.to_store ? std::min(job.to, StorableBlocks(task)) : job.from;
  if (job.from < store_to) {
    bool unfinished = false;
    StoreBlocks(task, staging, job.from, store_to, &unfinished);
    if (unfinished) {
      job.staging->Retire();
      ctx_.transport.RetainUntilClosed(job.staging);
    }
  }
  if (slot_ok_ && job.to_decode && job.from < job.to) WriteToDecode(job);
  if (job.last) FinishRequest(job, to_decode);
}

// The request's last job: every write waited for, then KvDone.
void PrefillRole::FinishRequest(const WriteJob& job, bool to_decode) {
  const PrefillTask& task = *job.task;
  bool streamed = slot_ok_;
  for (auto& w : writes_) {
    Status s = w.batch->Wait(ctx_.config.phase_timeout);
    if (!s.ok()) {
      streamed = false;
      Fail(s.WithContext("streaming KV of request " + std::to_string(task.request)));
    }
  }
  RetireWrites();
  writing_request_ = UINT64_MAX;
  if (!to_decode || !streamed) return;  // a request that could not stream is reported lost
  SleepUntil(job.due);
  KvDone kv;
  kv.request = task.request;
  kv.attempt = task.attempt;
  kv.prefill_rank = ctx_.peers.self.value;
  kv.input_length = task.input_length;
  kv.output_length = task.output_length;
  kv.first_token_wall_ns = job.first_token_wall_ns;
  kv.prefill_start_wall_ns = job.prefill_start_wall_ns;
  kv.remote_addr = slot_;
  kv.first_token = job.first_token;
  kv.hash_ids = task.hash_ids;
  kv.checksums = *job.checksums;
  kv.stream = task.stream;
  Status s = ctx_.rpc.Notify(Rank{task.decode_rank}, kMsgKvDone, kv.Encode());
  if (!s.ok()) Fail(s.WithContext("KvDone to decode rank " + std::to_string(task.decode_rank)));
}

int PrefillRole::LoadPrefix(const PrefillTask& task, std::shared_ptr<StagingBuffer>* staging,
                            uint64_t* bytes) {
  const uint64_t bb = ctx_.layout.block_bytes();
  // Modelled KV is a function of the hash id, checked here; computed KV is checked by the store
  // client against the checksum taken when it was put.
  const bool by_content = ctx_.engine->models_time();
  const int usable = std::min(task.prefix_blocks, StorableBlocks(task));
  int present = 0;
  for (int first = 0; first < usable && present == first;) {
    int n = std::min<int>(usable - first, 128);
    std::vector<std::string> keys;
    std::vector<std::span<std::byte>> outs;
    std::span<std::byte> buffer((*staging)->bytes());
    for (int b = first; b < first + n; ++b) {
      keys.push_back(ctx_.layout.Key(task.hash_ids[b]));
      outs.push_back(buffer.subspan(b * bb, bb));
    }
    bool abandoned = false;
    auto results = ctx_.store->BatchGet(keys, outs, &abandoned);
    if (abandoned) {
      // A read into this buffer was given up while in flight (its store rank stalled): the
      // transport may still write into it. What this batch read is checked again after the copy.
      const int kept = RetireStaging(task, staging, first + n, first);
      if (kept < first) {
        *bytes -= static_cast<uint64_t>(present - kept) * bb;
        present = kept;
        break;
      }
      buffer = std::span<std::byte>((*staging)->bytes());
      for (int k = 0; k < n; ++k) outs[k] = buffer.subspan((first + k) * bb, bb);
    }
    for (int k = 0; k < n; ++k) {
      int b = first + k;
      bool ok = results[k].ok() && *results[k] == bb &&
                (!by_content || ctx_.layout.Verify(task.hash_ids[b], outs[k]));
      if (!ok) {
        if (results[k].ok() || results[k].status().code() != ErrorCode::kNotFound) {
          log::Warn("prefix block {} of request {}: {}", task.hash_ids[b], task.request,
                    results[k].ok() ? "wrong bytes" : results[k].status().ToString());
        }
        break;
      }
      ++present;
      *bytes += bb;
    }
    first += n;
  }
  return present;
}

int PrefillRole::RetireStaging(const PrefillTask& task, std::shared_ptr<StagingBuffer>* staging,
                               int copy_blocks, int verify_blocks) {
  const uint64_t bb = ctx_.layout.block_bytes();
  std::shared_ptr<StagingBuffer> old = std::move(*staging);
  old->Retire();  // before Acquire: its share must not count against the fresh buffer
  *staging = staging_budget_->Acquire(old->bytes().size(), *ctx_.engine);
  std::memcpy((*staging)->bytes().data(), old->bytes().data(), copy_blocks * bb);
  ctx_.transport.RetainUntilClosed(std::move(old));
  int kept = 0;
  // Computed KV cannot be checked against its hash id: what was read before the stall is
  // given up and read again or recomputed.
  while (
      kept < verify_blocks && ctx_.engine->models_time() &&
      ctx_.layout.Verify(task.hash_ids[kept],
                         std::span<const std::byte>((*staging)->bytes()).subspan(kept * bb, bb))) {
    ++kept;
  }
  log::Warn(
      "request {}: a prefix read from a stalled store rank was given up in flight; its "
      "staging ({} B) is kept until the transport closes",
      task.request, (*staging)->bytes().size());
  return kept;
}

uint64_t PrefillRole::StoreBlocks(const PrefillTask& task, std::span<std::byte> staging, int from,
                                  int to, bool* unfinished) {
  const uint64_t bb = ctx_.layout.block_bytes();
  uint64_t written = 0;
  for (int first = from; first < to; first += 128) {
    int n = std::min(to - first, 128);
    std::vector<std::string> keys;
    std::vector<std::span<const std::byte>> values;
    for (int b = first; b < first + n; ++b) {
      keys.push_back(ctx_.layout.Key(task.hash_ids[b]));
      values.push_back(staging.subspan(b * bb, bb));
    }
    store::ReplicateConfig rc;
    rc.replicas = ctx_.config.replicas;
    bool abandoned = false;
    auto results = ctx_.store->BatchPut(keys, values, rc, &abandoned);
    // A write given up in flight (a stalled store rank) may still be reading the staging, even
    // when the key was then placed on another rank and succeeded.
    if (abandoned) *unfinished = true;
    for (int k = 0; k < n; ++k) {
      // AlreadyExists: another request computed the same prefix block first; objects are
      // immutable and equal, so that is a success. NoSpace etc. only cost future hits.
      if (results[k].ok()) {
        written += bb;
      } else if (results[k].code() != ErrorCode::kAlreadyExists &&
                 results[k].code() != ErrorCode::kBusy) {
        // A put that ran out of time (a stalled store rank) may still be reading the staging.
        if (results[k].code() == ErrorCode::kTimeout ||
            results[k].code() == ErrorCode::kPeerFailure) {
          *unfinished = true;
        }
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.store_put_failures;
      }
    }
  }
  return written;
}

int PrefillRole::StorableBlocks(const PrefillTask& task) const {
  const int blocks = static_cast<int>(task.hash_ids.size());
  if (ctx_.engine->models_time()) return blocks;
  return static_cast<int>(std::min<int64_t>(blocks, task.input_length / kTokensPerBlock));
}

bool PrefillRole::ClaimSwapKv(const PrefillTask& task, int from, int to) {
  if (!ctx_.config.fault_swap_kv || swapped_kv_ || to - from < 2) return false;
  swapped_kv_ = true;
  log::Warn("fault.swap_kv: request {}: the KV of blocks {} and {} swapped at the decode rank",
            task.request, from, from + 1);
  return true;
}

PrefillRole::WriteJob PrefillRole::BlocksJob(std::shared_ptr<const PrefillTask> task,
                                             std::shared_ptr<StagingBuffer> staging, int from,
                                             int to, bool to_decode, bool to_store, bool swap_kv) {
  WriteJob job;
  job.task = std::move(task);
  job.staging = std::move(staging);
  job.from = from;
  job.to = to;
  job.to_decode = to_decode;
  job.to_store = to_store;
  job.swap_kv = swap_kv;
  return job;
}

std::vector<transport::TransferRequest> PrefillRole::DecodeWrites(const WriteJob& job) const {
  const uint64_t bb = ctx_.layout.block_bytes();
  std::byte* staging = job.staging->bytes().data();
  const Rank decode{job.task->decode_rank};
  if (job.layer == kWholeBlocks && !job.swap_kv) {
    return {{transport::OpKind::kWrite, staging + job.from * bb, decode, slot_ + job.from * bb,
             static_cast<size_t>(job.to - job.from) * bb}};
  }
  // Layers are contiguous in a block (model/kv_cache.h): one piece per block, strided by bb.
  const bool whole = job.layer == kWholeBlocks;
  const uint64_t offset = whole ? 0 : uint64_t(job.layer) * ctx_.layout.piece_bytes();
  const size_t length = whole ? bb : ctx_.layout.piece_bytes();
  std::vector<transport::TransferRequest> writes;
  for (int b = job.from; b < job.to; ++b) {
    int at = b;
    if (job.swap_kv && b < job.from + 2) at = b == job.from ? job.from + 1 : job.from;
    writes.push_back({transport::OpKind::kWrite, staging + b * bb + offset, decode,
                      slot_ + at * bb + offset, length});
  }
  return writes;
}

void PrefillRole::TakeChecksums(Run& run, int from, int to) const {
  const uint64_t bb = ctx_.layout.block_bytes();
  const std::byte* kv = run.staging->bytes().data();
  for (int b = from; b < to; ++b) (*run.checksums)[b] = Checksum64(kv + b * bb, bb);
}

// The next chunk: computed by the engine (a modelled engine's time passes here; chunk ends are
// kept exact, they do not drift with the writer's or the scheduler's jitter), its finished
// blocks to the writer, each layer as it is computed where the engine computes layer by layer.
bool PrefillRole::ComputeChunk(Run& run) {
  const PrefillTask& task = *run.task;
  const bool modelled = ctx_.engine->models_time();
  const int64_t chunk = ctx_.config.chunk_tokens;
  const int64_t end =
      chunk > 0 ? std::min<int64_t>(task.input_length, run.done_tokens + chunk) : task.input_length;
  const int from = run.stored_blocks;
  const int complete = end >= task.input_length
                           ? run.blocks
                           : static_cast<int>(std::min<int64_t>(run.blocks, end / kTokensPerBlock));
  engine::PrefillChunk work{.request = task.request,
                            .hash_ids = task.hash_ids,
                            .input_length = task.input_length,
                            .prefix_tokens = run.done_tokens,
                            .tokens = end - run.done_tokens,
                            .first_block = from,
                            .end_block = std::max(complete, from),
                            .kv = run.staging->bytes(),
                            .prompt_ids = task.prompt_ids,
                            .on_layer = nullptr};  // set below where the KV streams per layer
  const bool swap = complete > from && ClaimSwapKv(task, from, complete);
  int32_t layers_streamed = 0;
  if (!modelled && ctx_.config.kv_stream_layers && complete > from) {
    work.on_layer = [&](int32_t layer) {
      WriteJob job = BlocksJob(run.task, run.staging, from, complete, true, false, swap);
      job.layer = layer;
      Enqueue(std::move(job));
      ++layers_streamed;
    };
  }
  const engine::PrefillResult r = ctx_.engine->Prefill(work);
  if (!r.error.empty()) {
    Fail(Status(ErrorCode::kInternal,
                "request " + std::to_string(task.request) + ": prefill compute: " + r.error));
    return false;
  }
  if (r.next_token != engine::kNoToken) run.first_token = r.next_token;
  run.compute_model_s += engine::NanosToSeconds(r.time.model);
  if (r.time.modelled) {
    run.chunk_end += ctx_.ModelToWall(r.time.model);
    SleepUntil(run.chunk_end);  // the GPU's time for this chunk
  } else {
    run.chunk_end = ctx_.LocalNow();  // the engine really computed it
  }
  if (complete > from) {
    // Every layer is in the staging now: the checksums of the whole blocks. Blocks streamed
    // layer by layer only go to the store; else (an engine that did not hand over every
    // layer) they go to the decode rank whole too.
    TakeChecksums(run, from, complete);
    const bool streamed = layers_streamed == static_cast<int32_t>(ctx_.layout.layers());
    if (modelled) {
      Enqueue(BlocksJob(run.task, run.staging, from, complete, true, true, swap));
    } else {
      if (!streamed) Enqueue(BlocksJob(run.task, run.staging, from, complete, true, false, swap));
      run.store_after.push_back(BlocksJob(run.task, run.staging, from, complete, false, true));
    }
  }
  run.stored_blocks = std::max(complete, from);
  run.done_tokens = end;
  return true;
}

// The conductor fails the request now rather than waiting for it until the job deadline.
void PrefillRole::ReportFailed(const PrefillTask& task) {
  PrefillDone failed;
  failed.request = task.request;
  failed.attempt = task.attempt;
  failed.prefill_rank = ctx_.peers.self.value;
  failed.failed = 1;
  Status sent = ctx_.NotifyConductor(kMsgPrefillDone, failed.Encode());
  if (!sent.ok()) Fail(sent.WithContext("PrefillDone"));
}

int64_t PrefillRole::SendPrefillDone(const Run& run, const Loaded& loaded, Nanos first_token_at) {
  const PrefillTask& task = *run.task;
  const uint64_t bb = ctx_.layout.block_bytes();
  const int missing = task.prefix_blocks - loaded.present;
  PrefillDone done;
  done.request = task.request;
  done.attempt = task.attempt;
  done.prefill_rank = ctx_.peers.self.value;
  done.blocks_loaded = loaded.present;
  done.blocks_missing = missing;
  done.blocks_computed = run.blocks - loaded.present;
  done.first_token_wall_ns = (first_token_at + ctx_.clock_offset).count();
  done.compute_model_s = run.compute_model_s;
  done.bytes_loaded = loaded.bytes_loaded;
  done.bytes_stored = static_cast<uint64_t>(run.blocks - loaded.present) * bb;
  done.bytes_to_decode = task.output_length > 1 ? static_cast<uint64_t>(run.blocks) * bb : 0;
  done.first_token = run.first_token;
  Status sent = ctx_.NotifyConductor(kMsgPrefillDone, done.Encode());
  if (!sent.ok()) Fail(sent.WithContext("PrefillDone"));
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.tasks;
  stats_.blocks_loaded += loaded.present;
  stats_.blocks_missing += missing;
  stats_.blocks_computed += run.blocks - loaded.present;
  return done.first_token_wall_ns;
}

void PrefillRole::QueueKvDone(Run& run, int64_t first_token_wall_ns, Nanos first_token_at) {
  const PrefillTask& task = *run.task;
  // KvDone is due when the modelled layer-wise transfer of the real KV would have finished: it
  // overlaps the compute, and the last layer leaves after it (as the simulator models it).
  const Nanos xfer = ctx_.ModelToWall(ctx_.cost.TransferTime(
      ctx_.cost.KvBytesPerToken() * static_cast<uint64_t>(task.input_length)));
  // A computing engine's KV went as it was computed: KvDone follows the writes at once.
  const Nanos due = !ctx_.engine->models_time()
                        ? Nanos(0)
                        : std::max(first_token_at + xfer / std::max(1u, ctx_.layout.layers()),
                                   run.compute_start + xfer);
  WriteJob last = BlocksJob(run.task, run.staging, run.blocks, run.blocks, false, false);
  last.last = true;
  last.due = due;
  last.first_token_wall_ns = first_token_wall_ns;
  last.prefill_start_wall_ns = (run.start + ctx_.clock_offset).count();
  last.checksums = run.checksums;
  last.first_token = run.first_token;
  Enqueue(std::move(last));
  for (WriteJob& job : run.store_after) Enqueue(std::move(job));
}

void PrefillRole::Serve(Loaded loaded) {
  Run run;
  run.task = loaded.task;
  const PrefillTask& task = *run.task;
  run.start = ctx_.LocalNow();
  run.blocks = static_cast<int>(task.hash_ids.size());
  run.staging = loaded.staging;
  run.checksums = std::make_shared<std::vector<uint64_t>>(run.blocks, 0);
  const bool modelled = ctx_.engine->models_time();

  // 1. The reused prefix was read ahead; the fetched part takes its modelled transfer time (a
  // computing engine's fetch was real: it waits no more).
  const int present = loaded.present;
  if (modelled) SleepUntil(run.start + ctx_.ModelToWall(Nanos(task.t_transfer_ns)));
  run.done_tokens = std::min<int64_t>(task.prefix_tokens, int64_t{present} * kTokensPerBlock);
  if (present < task.prefix_blocks) run.done_tokens = int64_t{present} * kTokensPerBlock;
  // A computing engine needs the last prompt token's logits for the first token: a prompt held
  // whole by the store still computes its last token.
  if (!modelled && run.done_tokens >= task.input_length) run.done_tokens = task.input_length - 1;
  TakeChecksums(run, 0, present);
  Enqueue(BlocksJob(run.task, run.staging, 0, present, true, false));

  // 2. Chunked compute of the rest by the engine.
  run.compute_start = ctx_.LocalNow();
  run.chunk_end = run.compute_start;
  run.stored_blocks = present;
  while (run.done_tokens < task.input_length) {
    if (!ComputeChunk(run)) {
      ReportFailed(task);
      for (WriteJob& job : run.store_after) Enqueue(std::move(job));
      return;
    }
  }
  // A prompt fully covered by the prefix still has blocks to hand to the decode rank.
  if (run.stored_blocks < run.blocks) {
    TakeChecksums(run, run.stored_blocks, run.blocks);
    Enqueue(BlocksJob(run.task, run.staging, run.stored_blocks, run.blocks, true, false));
  }
  // The first token comes when the last chunk really ended: a rank that woke late, a transfer
  // or a queue slower than predicted, all show in the TTFT the conductor records.
  const Nanos first_token_at = std::max(run.chunk_end, ctx_.LocalNow());

  // 3. The first token: the conductor hears at once; then the request's KvDone.
  const int64_t first_token_wall_ns = SendPrefillDone(run, loaded, first_token_at);
  QueueKvDone(run, first_token_wall_ns, first_token_at);
}

}  // namespace mooncake::serve
