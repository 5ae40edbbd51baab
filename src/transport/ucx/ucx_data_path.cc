// READ/WRITE over UCX: RMA (ucp_put/get_nbx with an rkey) or active-message rendezvous, chosen
// per peer (see UcxConfig::data_path). Each request is cut into slices; all slices of a batch
// are posted before any is waited on, so many stay in flight.
#include <cstring>

#include "common/log.h"
#include "common/streaming_copy.h"
#include "transport/slicing.h"
#include "transport/ucx/ucx_impl.h"
#include "transport/ucx/ucx_send_params.h"

namespace mooncake::transport {
namespace {

Status SliceFailure(int32_t peer, const char* what, ucs_status_t st) {
  return PeerFailure("rank " + std::to_string(peer) + ": " + what +
                     " failed: " + ucs_status_string(st));
}

// RMA slice or flush completion: completes one slice of each covered request.
void OnRmaDone(void* request, ucs_status_t status, void* user_data) {
  auto* op = static_cast<SliceOp*>(user_data);
  Status s = status == UCS_OK ? Status::Ok() : SliceFailure(op->peer, "rma", status);
  op->Complete(s);
  delete op;
  ucp_request_free(request);
}

// Lives until the send completes: UCX 1.13 reads the header until then.
struct AmSendContext {
  UcxTransport* transport;
  uint64_t token;
  DataHeader header;
};

// AM send completion: only failures matter here; success is signalled by the target's ack.
void OnAmSent(void* request, ucs_status_t status, void* user_data) {
  auto* ctx = static_cast<AmSendContext*>(user_data);
  if (status != UCS_OK) {
    ctx->transport->CompleteToken(
        ctx->token, Status(ErrorCode::kPeerFailure,
                           std::string("am send failed: ") + ucs_status_string(status)));
  }
  delete ctx;
  ucp_request_free(request);
}

void OnAckSent(void* request, ucs_status_t, void* user_data) {
  delete static_cast<AckHeader*>(user_data);
  ucp_request_free(request);
}

struct RecvContext {
  UcxTransport* transport;
  uint64_t token;    // initiator side (read response): the slice to complete
  int32_t ack_peer;  // target side (write): who to ack; -1 when not acking
  uint64_t ack_token;
};

// One spare SliceOp per posting thread: on shared memory ucp_get/put_nbx usually completes
// inside the call, and the op (whose address UCX must have before it knows) is then reused by
// the next slice instead of going back to the heap (a 4 KiB read is ~0.3 us; malloc/free shows).
thread_local std::unique_ptr<SliceOp> t_spare_op;

SliceOp* TakeSliceOp(const std::shared_ptr<BatchTracker>& tracker, size_t index, int32_t peer) {
  if (!t_spare_op) return new SliceOp{tracker, index, {}, peer, nullptr, 0};
  SliceOp* op = t_spare_op.release();
  op->tracker = tracker;
  op->index = index;
  op->peer = peer;
  return op;
}

// `op` was not handed to UCX (completed or failed inside the call): keep it for the next slice.
void ReturnSliceOp(SliceOp* op) {
  op->tracker.reset();
  if (t_spare_op) {
    delete op;
  } else {
    t_spare_op.reset(op);
  }
}

}  // namespace

const RkeyHolder* UcxTransport::FindImported(int32_t peer, uint64_t addr, uint64_t length) {
  // A small per-thread cache (one entry per peer slot): a hit costs two plain loads and compares,
  // no mutex and no reference count (each was ~10 % of a 4 KiB read). Entries name their
  // transport by a process-unique id, so a later transport at the same address never hits.
  struct Entry {
    uint64_t transport = 0;
    int32_t peer = -1;
    uint64_t version = 0;
    uint64_t base = 0;
    uint64_t length = 0;
    const RkeyHolder* holder = nullptr;
  };
  thread_local Entry cache[8];
  Entry& e = cache[static_cast<uint32_t>(peer) % 8];
  const uint64_t version = imports_version_.load(std::memory_order_acquire);
  if (e.transport == instance_id_ && e.peer == peer && e.version == version && addr >= e.base &&
      length <= e.length && addr - e.base <= e.length - length) {
    return e.holder;
  }
  auto m = imported_[peer]->FindRegion(addr, length);
  if (!m) return nullptr;
  // The table (or retired_holders_) keeps the holder alive until Close.
  e = Entry{instance_id_, peer, version, m->base, m->length, m->value.get()};
  return e.holder;
}

uint64_t UcxTransport::RegisterToken(std::unique_ptr<SliceOp> op) {
  std::lock_guard<std::mutex> lock(tokens_mutex_);
  uint64_t token = token_source_.Next();
  while (tokens_.count(token) != 0) token = token_source_.Next();  // never in 2^64, but cheap
  tokens_[token] = std::move(op);
  return token;
}

void UcxTransport::CompleteToken(uint64_t token, const Status& status) {
  std::unique_ptr<SliceOp> op;
  {
    std::lock_guard<std::mutex> lock(tokens_mutex_);
    auto it = tokens_.find(token);
    if (it == tokens_.end()) return;  // already completed (ack and error raced)
    op = std::move(it->second);
    tokens_.erase(it);
  }
  op->Complete(status);
}

Result<std::unique_ptr<TransferBatch>> UcxTransport::Submit(
    std::span<const TransferRequest> requests) {
  if (closing_) return Internal("transport is closed");
  // On shared memory a put/get is a memcpy done on this thread (directly or inside
  // ucp_put/get_nbx): keep the progress thread off this core meanwhile (see
  // caller_progress_calls_). Not for one small request: its copy is over before the progress
  // thread would look, and the two atomic updates were ~5 % of a 4 KiB read.
  struct Posting {
    std::atomic<int>* n;
    explicit Posting(std::atomic<int>* c) : n(c) {
      if (n) n->fetch_add(1, std::memory_order_relaxed);
    }
    ~Posting() {
      if (n) n->fetch_sub(1, std::memory_order_relaxed);
    }
  } posting(requests.size() == 1 && requests[0].length < 64 * 1024 ? nullptr : &callers_posting_);
  auto tracker = BatchTracker::Make(requests);
  std::vector<std::vector<size_t>>
      writes_by_peer;  // sized at the first RMA write (reads: no allocation)
  for (size_t i = 0; i < requests.size(); ++i) {
    const TransferRequest& r = requests[i];
    if (r.length == 0) {
      tracker->SetSlices(i, 0);
      continue;
    }
    if (r.peer.value < 0 || r.peer.value >= slots_ || eps_.Get(r.peer.value) == nullptr) {
      tracker->SetSlices(i, 1);
      tracker->CompleteSlice(
          i, InvalidArgument("request names rank " + std::to_string(r.peer.value) + " of " +
                             std::to_string(world_size_) + ", which is not connected"));
      continue;
    }
    Status s = UsesAm(r.peer.value) ? PostAm(tracker, i) : PostRma(tracker, i, &writes_by_peer);
    if (!s.ok()) log::Debug("request {} failed at post: {}", i, s.ToString());
  }
  for (int32_t p = 0; p < static_cast<int32_t>(writes_by_peer.size()); ++p) {
    if (!writes_by_peer[p].empty()) PostFlush(tracker, p, std::move(writes_by_peer[p]));
  }
  return std::unique_ptr<TransferBatch>(new SharedBatch(std::move(tracker), this));
}

std::byte* UcxTransport::MappedAddress(Rank peer, uint64_t remote_addr, size_t length) {
  // The same conditions as PostRma's direct copy. Over shared memory no peer-failure callback
  // is requested (families without it refuse that error mode), so a peer that died still
  // answers here with its orphaned segment: the store notices it through leases and the
  // master, not through the copy. Callers must not race Close, as for Submit.
  if (closing_ || peer.value < 0 || peer.value >= slots_ || eps_.Get(peer.value) == nullptr ||
      TransfersRefused(peer.value) || config_.data_path != DataPath::kAuto || UsesAm(peer.value)) {
    return nullptr;
  }
  const RkeyHolder* rkey = FindImported(peer.value, remote_addr, length);
  if (rkey == nullptr || rkey->mapped == nullptr) return nullptr;
  return rkey->mapped + (remote_addr - rkey->remote_base);
}

Status UcxTransport::PostRma(const std::shared_ptr<BatchTracker>& tracker, size_t index,
                             std::vector<std::vector<size_t>>* writes_by_peer) {
  const TransferRequest& r = tracker->requests()[index];
  const int32_t peer = r.peer.value;
  const bool is_write = r.op == OpKind::kWrite;
  const RkeyHolder* rkey = FindImported(peer, r.remote_addr, r.length);
  if (rkey != nullptr && rkey->mapped != nullptr && config_.data_path == DataPath::kAuto &&
      !TransfersRefused(peer)) {
    // The peer's segment is mapped here: the transfer is one memcpy on this thread, complete
    // (and visible to the peer, memory being coherent) when it returns. ucp_get/put_nbx would
    // do the same copy, under the worker's lock (which serialises threads) and after its own
    // protocol selection; this skips both.
    std::byte* remote = rkey->mapped + (r.remote_addr - rkey->remote_base);
    if (is_write && r.bypass_cache) {
      StreamingCopy(remote, r.local, r.length);
    } else if (is_write) {
      LargeCopy(remote, r.local, r.length);
    } else {
      LargeCopy(r.local, remote, r.length);
    }
    tracker->SetSlices(index, 0);  // nothing left in flight: the request is complete
    return Status::Ok();
  }
  const uint32_t slices = SliceCount(r.length, config_.rma_slice);
  // A write completes only after the flush that follows it (remote completion), hence +1.
  tracker->SetSlices(index, slices + (is_write ? 1 : 0));
  Status error;
  if (TransfersRefused(peer)) {
    error = PeerFailure("rank " + std::to_string(peer) + " has failed");
  } else if (rkey == nullptr) {
    error = InvalidArgument("rank " + std::to_string(peer) + ": remote range [" +
                            std::to_string(r.remote_addr) + ", +" + std::to_string(r.length) +
                            ") is not inside a region imported from that rank");
  }
  if (!error.ok()) {
    tracker->FailRemaining(index, slices + (is_write ? 1 : 0), error);
    return error;
  }
  for (uint32_t s = 0; s < slices; ++s) {
    Slice slice = SliceAt(r.length, config_.rma_slice, s);
    SliceOp* op = TakeSliceOp(tracker, index, peer);
    ucp_request_param_t rp = SendParams(OnRmaDone, op);
    void* local = static_cast<std::byte*>(r.local) + slice.offset;
    uint64_t remote = r.remote_addr + slice.offset;
    ucs_status_ptr_t req =
        is_write ? ucp_put_nbx(eps_.Get(peer), local, slice.length, remote, rkey->rkey, &rp)
                 : ucp_get_nbx(eps_.Get(peer), local, slice.length, remote, rkey->rkey, &rp);
    if (req == nullptr) {
      tracker->CompleteSlice(index, Status::Ok());
      ReturnSliceOp(op);
    } else if (UCS_PTR_IS_ERR(req)) {
      ReturnSliceOp(op);
      Status e = SliceFailure(peer, is_write ? "put" : "get", UCS_PTR_STATUS(req));
      tracker->FailRemaining(index, slices - s + (is_write ? 1 : 0), e);
      return e;
    }
  }
  if (is_write) {
    if (writes_by_peer->empty()) writes_by_peer->resize(slots_);
    (*writes_by_peer)[peer].push_back(index);
  }
  return Status::Ok();
}

void UcxTransport::PostFlush(const std::shared_ptr<BatchTracker>& tracker, int32_t peer,
                             std::vector<size_t> indices) {
  auto* op = new SliceOp{tracker, 0, std::move(indices), peer, nullptr, 0};
  ucp_request_param_t rp = SendParams(OnRmaDone, op);
  ucs_status_ptr_t req = ucp_ep_flush_nbx(eps_.Get(peer), &rp);
  if (req == nullptr || UCS_PTR_IS_ERR(req)) {
    Status s = req == nullptr ? Status::Ok() : SliceFailure(peer, "flush", UCS_PTR_STATUS(req));
    op->Complete(s);
    delete op;
  }
}

Status UcxTransport::PostAm(const std::shared_ptr<BatchTracker>& tracker, size_t index) {
  const TransferRequest& r = tracker->requests()[index];
  const int32_t peer = r.peer.value;
  const uint32_t slices = SliceCount(r.length, config_.am_slice);
  tracker->SetSlices(index, slices);
  if (TransfersRefused(peer)) {
    Status e = PeerFailure("rank " + std::to_string(peer) + " has failed");
    tracker->FailRemaining(index, slices, e);
    return e;
  }
  for (uint32_t s = 0; s < slices; ++s) {
    Slice slice = SliceAt(r.length, config_.am_slice, s);
    auto* local = static_cast<std::byte*>(r.local) + slice.offset;
    uint64_t token = RegisterToken(
        std::make_unique<SliceOp>(SliceOp{tracker, index, {}, peer, local, slice.length}));
    auto* ctx = new AmSendContext{
        this, token,
        DataHeader{token, r.remote_addr + slice.offset, slice.length, SourceFor(peer), 0}};
    // REPLY: the target learns which of its endpoints the message came on and checks the
    // number in the header against it (DataSender), for job ranks and attached processes alike.
    ucp_request_param_t rp = SendParams(OnAmSent, ctx, UCP_AM_SEND_FLAG_REPLY);
    DataHeader* h = &ctx->header;
    ucs_status_ptr_t req =
        r.op == OpKind::kWrite
            ? ucp_am_send_nbx(eps_.Get(peer), kAmWrite, h, sizeof *h, local, slice.length, &rp)
            : ucp_am_send_nbx(eps_.Get(peer), kAmReadReq, h, sizeof *h, nullptr, 0, &rp);
    if (req == nullptr) {
      delete static_cast<AmSendContext*>(rp.user_data);
    } else if (UCS_PTR_IS_ERR(req)) {
      delete static_cast<AmSendContext*>(rp.user_data);
      CompleteToken(token, SliceFailure(peer, "am send", UCS_PTR_STATUS(req)));
    }
  }
  return Status::Ok();
}

void UcxTransport::SendAck(int32_t peer, unsigned id, uint64_t token, ucs_status_t status,
                           const void* data, size_t length) {
  std::shared_ptr<AttachedPeer> keep;  // an attached peer's endpoint stays open while we post
  ucp_ep_h ep = EndpointOf(peer, &keep);
  if (ep == nullptr) return;
  auto* h = new AckHeader{token, static_cast<int32_t>(status), 0};
  // REPLY: the writer or reader checks where its answer came from.
  ucp_request_param_t rp = SendParams(OnAckSent, h, UCP_AM_SEND_FLAG_REPLY);
  ucs_status_ptr_t req = ucp_am_send_nbx(ep, id, h, sizeof *h, data, length, &rp);
  if (req == nullptr) {
    delete h;
  } else if (UCS_PTR_IS_ERR(req)) {
    delete h;
    log::Warn("ack to rank {} failed: {}", peer, ucs_status_string(UCS_PTR_STATUS(req)));
  }
}

bool UcxTransport::CameFrom(int32_t rank, const ucp_am_recv_param_t* param) const {
  if (rank >= 0 && rank < slots_) {  // a job rank, or a store rank that joined (its slot)
    return (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) != 0 &&
           param->reply_ep != nullptr && param->reply_ep == eps_.Get(rank);
  }
  return rank >= slots_ && AttachedSenderMatches(rank, param);
}

bool UcxTransport::DataSender(int32_t rank, const ucp_am_recv_param_t* param) {
  if (CameFrom(rank, param)) return true;
  CountRefusal(rank, param);
  return false;
}

std::string UcxTransport::SenderName(const ucp_am_recv_param_t* param) const {
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) || param->reply_ep == nullptr) {
    return "unknown";
  }
  // A scan, on the refusal path only: no table to keep in step with endpoints that come and go.
  for (int32_t r = 0; r < slots_; ++r) {
    if (eps_.Get(r) == param->reply_ep) return std::to_string(r);
  }
  std::lock_guard<std::mutex> lock(attached_mutex_);
  for (const auto& [rank, peer] : attached_) {
    if (peer->ep.get() == param->reply_ep) return "attached:" + peer->client;
  }
  for (const auto& peer : unadmitted_) {
    if (peer->ep.get() == param->reply_ep) return "unadmitted:" + peer->client;
  }
  return "unknown";
}

void UcxTransport::CountRefusal(int32_t rank, const ucp_am_recv_param_t* param) {
  std::string sender = SenderName(param);
  {
    std::lock_guard<std::mutex> lock(refusals_mutex_);
    // Bounded: a process opening endpoint after endpoint must not grow the table without end.
    if (!refused_by_peer_.contains(sender) && refused_by_peer_.size() >= kMaxRefusalSenders) {
      sender = "other";
    }
    ++refused_by_peer_[sender];
  }
  if (refused_data_messages_.fetch_add(1, std::memory_order_relaxed) == 0) {
    log::Warn(
        "refusing data-path messages that claim to come from rank {} but arrived on "
        "another endpoint ({}; further ones are counted, not logged)",
        rank, sender);
  }
}

ucs_status_t UcxTransport::OnWrite(const void* header, size_t header_length, void* data,
                                   size_t length, const ucp_am_recv_param_t* param) {
  // A refused message: an error status declines a rendezvous, but on an eager message UCX 1.13
  // asserts the handler returned no error (ucp_am_handler_reply) and aborts the rank, so a
  // forged eager write used to kill it; UCS_OK drops the bytes.
  const ucs_status_t refuse =
      (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ? UCS_ERR_INVALID_PARAM : UCS_OK;
  if (header_length != sizeof(DataHeader)) return refuse;
  DataHeader h;
  std::memcpy(&h, header, sizeof h);
  if (!DataSender(h.src_rank, param)) return refuse;
  if (h.length != length || !local_ranges_.Find(h.remote_addr, h.length)) {
    // Outside every registered region: never touch memory; tell the writer why.
    SendAck(h.src_rank, kAmWriteAck, h.token, UCS_ERR_INVALID_ADDR, nullptr, 0);
    return (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ? UCS_ERR_INVALID_ADDR : UCS_OK;
  }
  void* target = reinterpret_cast<void*>(h.remote_addr);
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    std::memcpy(target, data, length);
    SendAck(h.src_rank, kAmWriteAck, h.token, UCS_OK, nullptr, 0);
    return UCS_OK;
  }
  auto* ctx = new RecvContext{this, 0, h.src_rank, h.token};
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  rp.cb.recv_am = [](void* request, ucs_status_t status, size_t, void* user_data) {
    auto* c = static_cast<RecvContext*>(user_data);
    c->transport->SendAck(c->ack_peer, kAmWriteAck, c->ack_token, status, nullptr, 0);
    delete c;
    ucp_request_free(request);
  };
  rp.user_data = ctx;
  ucs_status_ptr_t req = ucp_am_recv_data_nbx(worker_.get(), data, target, length, &rp);
  if (req == nullptr || UCS_PTR_IS_ERR(req)) {
    ucs_status_t st = req == nullptr ? UCS_OK : UCS_PTR_STATUS(req);
    SendAck(h.src_rank, kAmWriteAck, h.token, st, nullptr, 0);
    delete ctx;
  }
  return UCS_INPROGRESS;
}

ucs_status_t UcxTransport::OnReadReq(const void* header, size_t header_length,
                                     const ucp_am_recv_param_t* param) {
  if (header_length != sizeof(DataHeader)) return UCS_OK;
  DataHeader h;
  std::memcpy(&h, header, sizeof h);
  if (!DataSender(h.src_rank, param)) return UCS_OK;
  if (!local_ranges_.Find(h.remote_addr, h.length)) {
    SendAck(h.src_rank, kAmReadResp, h.token, UCS_ERR_INVALID_ADDR, nullptr, 0);
    return UCS_OK;
  }
  // The registered region stays mapped while the transport lives, so UCX may send from it
  // directly (zero copy, rendezvous for large sizes).
  SendAck(h.src_rank, kAmReadResp, h.token, UCS_OK, reinterpret_cast<const void*>(h.remote_addr),
          h.length);
  return UCS_OK;
}

ucs_status_t UcxTransport::OnAck(unsigned id, const void* header, size_t header_length, void* data,
                                 size_t length, const ucp_am_recv_param_t* param) {
  if (header_length != sizeof(AckHeader)) return UCS_OK;
  AckHeader h;
  std::memcpy(&h, header, sizeof h);
  auto status = static_cast<ucs_status_t>(h.status);
  int32_t peer = -1;
  void* local = nullptr;
  size_t expected = 0;
  bool forged = false;
  {
    std::lock_guard<std::mutex> lock(tokens_mutex_);
    auto it = tokens_.find(h.token);
    if (it == tokens_.end()) return UCS_OK;  // the batch gave up on it; drop
    peer = it->second->peer;
    // Only the rank the transfer went to may answer it: a right token on another endpoint is a
    // forgery (or a leak), and must neither complete nor fail the transfer.
    forged = !CameFrom(peer, param);
    local = it->second->local;
    expected = it->second->length;
  }
  if (forged) {
    CountRefusal(peer, param);  // outside tokens_mutex_: it takes attached_mutex_
    return UCS_OK;
  }
  if (status != UCS_OK) {
    std::string why = status == UCS_ERR_INVALID_ADDR
                          ? "remote range is not inside a region registered by that rank"
                          : ucs_status_string(status);
    CompleteToken(h.token, Status(status == UCS_ERR_INVALID_ADDR ? ErrorCode::kInvalidArgument
                                                                 : ErrorCode::kPeerFailure,
                                  "rank " + std::to_string(peer) + ": " + why));
    return UCS_OK;
  }
  if (id == kAmWriteAck) {
    CompleteToken(h.token, Status::Ok());
    return UCS_OK;
  }
  if (length != expected) {
    CompleteToken(
        h.token, ProtocolError("rank " + std::to_string(peer) + " answered a read of " +
                               std::to_string(expected) + " bytes with " + std::to_string(length)));
    return UCS_OK;
  }
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
    std::memcpy(local, data, length);
    CompleteToken(h.token, Status::Ok());
    return UCS_OK;
  }
  auto* ctx = new RecvContext{this, h.token, -1, 0};
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  rp.cb.recv_am = [](void* request, ucs_status_t status, size_t, void* user_data) {
    auto* c = static_cast<RecvContext*>(user_data);
    c->transport->CompleteToken(c->token, status == UCS_OK
                                              ? Status::Ok()
                                              : PeerFailure(std::string("read receive failed: ") +
                                                            ucs_status_string(status)));
    delete c;
    ucp_request_free(request);
  };
  rp.user_data = ctx;
  ucs_status_ptr_t req = ucp_am_recv_data_nbx(worker_.get(), data, local, length, &rp);
  if (req == nullptr || UCS_PTR_IS_ERR(req)) {
    CompleteToken(h.token, req == nullptr ? Status::Ok()
                                          : PeerFailure(std::string("read receive failed: ") +
                                                        ucs_status_string(UCS_PTR_STATUS(req))));
    delete ctx;
  }
  return UCS_INPROGRESS;
}

}  // namespace mooncake::transport
