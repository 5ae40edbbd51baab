#include "store/net/master_service.h"

#include "common/log.h"
#include "common/units.h"
#include "store/standby_table.h"

namespace mooncake::store {
namespace {
// What the answer of the call being handled on this thread waits for: journal entry `seq` of
// `journal` (seq 0: nothing).
struct WaitFor {
  uint64_t seq = 0;
  JournalSender* journal = nullptr;
};
thread_local WaitFor t_wait;

// A batched call's request, answer and per-key statuses, kept by each thread that serves it and
// reused: the keys, the entries and their replica vectors keep their capacity, so a call on
// small objects allocates nothing per key once warm.
template <typename Request, typename Response>
struct CallScratch {
  Request req;
  Response resp;
  std::vector<Status> status;
};
template <typename Request, typename Response>
CallScratch<Request, Response>& ThreadScratch() {
  thread_local CallScratch<Request, Response> scratch;
  return scratch;
}

}  // namespace

MasterService::MasterService(MasterServiceConfig cfg, transport::Rpc& rpc, Clock& clock,
                             EvictionSink* sink)
    : cfg_(cfg), rpc_(rpc), clock_(clock), sink_(sink) {
  master_.emplace(cfg.master, clock, sink);
}

MasterService::~MasterService() { Stop(); }

Status MasterService::AddSegments(const StoreTopology& topology) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& s : topology.segments) {
    MC_RETURN_IF_ERROR(master_->AddSegment(s.rank, s.length));
    segments_.segments.push_back(s);
  }
  return Status::Ok();
}

Status MasterService::AddSegment(const StoreSegment& segment) {
  std::lock_guard<std::mutex> lock(mutex_);
  MC_RETURN_IF_ERROR(master_->AddSegment(segment.rank, segment.length));
  segments_.segments.push_back(segment);
  return Status::Ok();
}

Status MasterService::RemoveDrainedSegment(Rank rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  MC_RETURN_IF_ERROR(master_->RemoveDrained(rank));
  std::erase_if(segments_.segments, [&](const StoreSegment& s) { return s.rank == rank; });
  return Status::Ok();
}

void MasterService::Reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  master_.emplace(cfg_.master, clock_, sink_);
  master_->TrackChanges(journal_ != nullptr);
  if (journal_ != nullptr) {
    journal_scratch_.push_back(JournalEntry{JournalOp::kReset, {}, {}, 0});
    journal_->Append(journal_scratch_);
  }
  for (const auto& s : segments_.segments) (void)master_->AddSegment(s.rank, s.length);
  (void)JournalLocked();
}

void MasterService::SetJournal(JournalSender* journal) {
  std::lock_guard<std::mutex> lock(mutex_);
  journal_ = journal;
  master_->TrackChanges(journal != nullptr);
}

Status MasterService::Restore(const StandbyTable& table) {
  std::lock_guard<std::mutex> lock(mutex_);
  master_.emplace(cfg_.master, clock_, sink_);
  master_->TrackChanges(journal_ != nullptr);
  segments_.segments.clear();
  for (const auto& [rank, length] : table.segments()) {
    StoreSegment seg;
    seg.rank = rank;
    seg.length = length;
    segments_.segments.push_back(seg);
  }
  first_request_ns_ = 0;
  return table.RestoreInto(*master_);
}

uint64_t MasterService::JournalLocked() {
  if (journal_ == nullptr || !master_->has_changes()) return 0;
  master_->TakeChanges(&journal_scratch_);
  const uint64_t seq = journal_->Append(journal_scratch_);
  if (seq != 0) t_wait = WaitFor{seq, journal_};
  return seq;
}

void MasterService::SetEvictionSink(EvictionSink* sink) {
  std::lock_guard<std::mutex> lock(mutex_);
  sink_ = sink;
  master_->SetSink(sink);
}

void MasterService::Start() {
  for (StoreMsg type :
       {StoreMsg::kPutStart, StoreMsg::kPutEnd, StoreMsg::kPutRevoke, StoreMsg::kGet,
        StoreMsg::kExists, StoreMsg::kStats, StoreMsg::kSuspectRanks}) {
    // Inline: the handlers only take the master's mutex for in-memory work (the eviction sink
    // queues and returns), so they run on the receiving thread with no dispatcher wake-up.
    transport::CheckRegistered(rpc_.RegisterInline(
        type, [this, type](Rank, std::span<const std::byte> request, transport::Responder r) {
          Serve(type, request, r);
        }));
  }
  // On the dispatcher: a remove of an SSD-resident object waits for its tombstones (a Call to
  // the store ranks), which an inline handler must never do.
  transport::CheckRegistered(rpc_.Register(
      StoreMsg::kRemove, [this](Rank, std::span<const std::byte> request, transport::Responder r) {
        Serve(StoreMsg::kRemove, request, r);
      }));
  if (cfg_.tick_interval > Nanos(0) && !ticker_.joinable()) {
    ticker_ = std::thread([this] { TickLoop(); });
  }
}

void MasterService::Stop() {
  {
    std::lock_guard<std::mutex> lock(tick_mutex_);
    stopping_ = true;
  }
  tick_cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

void MasterService::TickLoop() {
  std::unique_lock<std::mutex> lock(tick_mutex_);
  while (!tick_cv_.wait_for(lock, cfg_.tick_interval, [this] { return stopping_; })) {
    size_t revoked = WithMaster([](MetadataMaster& m) { return m.Tick(); });
    if (revoked > 0) log::Info("store master: revoked {} put(s) past their timeout", revoked);
  }
}

StatsResponse MasterService::Stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  StatsResponse s = stats_;
  MasterStats m = master_->Stats();
  s.objects = m.objects;
  s.in_flight_puts = m.in_flight_puts;
  s.evicted_replicas = m.evicted_replicas;
  s.revoked_puts = m.revoked_puts;
  s.timed_out_puts = m.timed_out_puts;
  return s;
}

void MasterService::Serve(StoreMsg type, std::span<const std::byte> request,
                          transport::Responder responder) {
  if (first_request_ns_.load(std::memory_order_relaxed) == 0) {
    int64_t none = 0;
    first_request_ns_.compare_exchange_strong(none, wall_.Now().count());
  }
  t_wait = WaitFor{};
  auto reply = Handle(type, request);
  if (reply.ok() && t_wait.seq != 0) {
    // Changed committed state: answered once the standby has it (JournalSender).
    const WaitFor wait = t_wait;
    t_wait = WaitFor{};
    wait.journal->ReplyWhenAcked(wait.seq, responder, std::move(*reply));  // and sends
    return;
  }
  if (reply.ok()) {
    responder.Reply(*reply);
  } else {
    responder.Fail(reply.status());
  }
}

// A remove is answered only once the tombstones of its SSD copies are durable; the master's lock
// is not held meanwhile (the store ranks' flushes take milliseconds).
Result<std::vector<std::byte>> MasterService::Remove(std::span<const std::byte> request) {
  KeysRequest req;
  MC_RETURN_IF_ERROR(Decode(request, &req));
  std::vector<Status> status;
  std::vector<TombstoneOrder> orders;
  TombstoneWriter writer;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.requests;
    status = master_->BatchRemove(req.keys);
    orders = master_->TakeTombstones();
    writer = tombstone_writer_;
    (void)JournalLocked();
  }
  if (!orders.empty() && writer) {
    std::vector<Status> written = writer(orders);
    for (size_t i = 0; i < orders.size() && i < written.size(); ++i) {
      if (written[i].ok()) continue;
      for (size_t k = 0; k < req.keys.size(); ++k) {
        if (req.keys[k] == orders[i].key && status[k].ok()) {
          status[k] = written[i].WithContext(
              "'" + orders[i].key +
              "' is removed, but its SSD copy may come back after a store.recover restart");
        }
      }
    }
  }
  StatusResponse resp;
  for (const auto& s : status) resp.entries.push_back(ToEntry(s));
  return Encode(resp);
}

void MasterService::SetTombstoneWriter(TombstoneWriter writer) {
  std::lock_guard<std::mutex> lock(mutex_);
  tombstone_writer_ = std::move(writer);
}

Result<std::vector<std::byte>> MasterService::PutStart(std::span<const std::byte> request) {
  auto& t = ThreadScratch<PutStartRequest, PutStartResponse>();
  MC_RETURN_IF_ERROR(DecodeInto(request, &t.req));
  t.resp.entries.resize(t.req.keys.size());
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.requests;
  master_->BatchPutStartInto(t.req.keys, t.req.sizes, t.req.config, &t.status,
                             [&](size_t i) { return &t.resp.entries[i].replicas; });
  for (size_t i = 0; i < t.req.keys.size(); ++i) {
    PutStartEntry& e = t.resp.entries[i];
    e.status = ToEntry(t.status[i]);
    if (!t.status[i].ok()) e.replicas.clear();  // a refused key carries no replicas
  }
  (void)JournalLocked();  // what its allocations evicted
  return Encode(t.resp);
}

Result<std::vector<std::byte>> MasterService::PutEnd(std::span<const std::byte> request) {
  auto& t = ThreadScratch<PutEndRequest, StatusResponse>();
  MC_RETURN_IF_ERROR(DecodeInto(request, &t.req));
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.requests;
  master_->BatchPutEndInto(t.req.keys, t.req.checksums, &t.status);
  t.resp.entries.resize(t.status.size());
  for (size_t i = 0; i < t.status.size(); ++i) t.resp.entries[i] = ToEntry(t.status[i]);
  (void)JournalLocked();
  return Encode(t.resp);
}

Result<std::vector<std::byte>> MasterService::Get(std::span<const std::byte> request) {
  auto& t = ThreadScratch<KeysRequest, GetResponse>();  // decoded and filled in place
  MC_RETURN_IF_ERROR(DecodeInto(request, &t.req));
  t.resp.entries.resize(t.req.keys.size());
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.requests;
  Nanos t0 = wall_.Now();
  master_->BatchGetInto(t.req.keys, &t.status, [&](size_t i) { return &t.resp.entries[i].view; });
  for (size_t i = 0; i < t.req.keys.size(); ++i) {
    GetEntry& e = t.resp.entries[i];
    e.status = ToEntry(t.status[i]);
    if (!t.status[i].ok()) {  // what a fresh entry holds: a refused key carries no view
      e.view.size = e.view.checksum = e.view.version = 0;
      e.view.lease = Nanos(0);
      e.view.replicas.clear();
    }
  }
  stats_.get_keys += t.req.keys.size();
  stats_.get_ns += (wall_.Now() - t0).count();
  (void)JournalLocked();  // a promotion's allocation may have evicted
  return Encode(t.resp);
}

Result<std::vector<std::byte>> MasterService::Handle(StoreMsg type,
                                                     std::span<const std::byte> request) {
  switch (type) {
    case StoreMsg::kPutStart:
      return PutStart(request);
    case StoreMsg::kPutEnd:
      return PutEnd(request);
    case StoreMsg::kPutRevoke: {
      KeysRequest req;
      MC_RETURN_IF_ERROR(Decode(request, &req));
      StatusResponse resp;
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.requests;
      for (const auto& k : req.keys) resp.entries.push_back(ToEntry(master_->PutRevoke(k)));
      return Encode(resp);
    }
    case StoreMsg::kRemove:
      return Remove(request);
    case StoreMsg::kGet:
      return Get(request);
    case StoreMsg::kExists: {
      thread_local KeysRequest req;
      MC_RETURN_IF_ERROR(DecodeInto(request, &req));
      ExistsResponse resp;
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.requests;
      Nanos t0 = wall_.Now();
      resp.exists = master_->BatchExists(req.keys);
      stats_.exists_keys += req.keys.size();
      stats_.exists_ns += (wall_.Now() - t0).count();
      return Encode(resp);
    }
    case StoreMsg::kStats:
      return Encode(Stats());
    case StoreMsg::kSuspectRanks: {
      SuspectRanksRequest req;
      MC_RETURN_IF_ERROR(Decode(request, &req));
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.requests;
      for (Rank r : req.ranks) {
        // Unknown ranks (already removed, or never store ranks) are ignored: nothing to avoid.
        auto fresh = master_->MarkSuspect(r);
        if (fresh.ok() && *fresh) {
          log::Warn(
              "store master: a client's write to store rank {} failed: no new replicas "
              "there for {} (or until it is declared dead)",
              r.value, FormatDuration(cfg_.master.suspect_for));
        }
      }
      return std::vector<std::byte>{};
    }
    case StoreMsg::kDirectory:
    case StoreMsg::kServiceStop:
    case StoreMsg::kRecoveryReport:
    case StoreMsg::kJournal:
    case StoreMsg::kDrain:
    case StoreMsg::kJoin:
      break;  // the store's nodes' own messages (store/node/), never routed here
  }
  return ProtocolError("unknown store message " + std::to_string(static_cast<int>(type)));
}

}  // namespace mooncake::store
