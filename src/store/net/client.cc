// StoreClient: common plumbing, put, exists and remove (get is in client_get.cc).
#include "store/net/client.h"

#include <algorithm>

namespace mooncake::store {
namespace {

thread_local uint64_t master_unanswered_here = 0;  // StoreClient::MasterUnansweredOnThisThread

}  // namespace

StoreClient::StoreClient(transport::Transport& transport, transport::Rpc& rpc, Rank master,
                         StoreTopology topology, StoreClientConfig cfg)
    : transport_(transport),
      rpc_(rpc),
      master_(std::make_shared<std::atomic<int32_t>>(master.value)),
      topology_(std::make_shared<GrowingTopology>(std::move(topology))),
      cfg_(cfg) {}

Result<std::vector<std::byte>> StoreClient::Call(StoreMsg type, std::span<const std::byte> request,
                                                 const Deadline& d) {
  Nanos left = d.Remaining(clock_);
  if (left <= Nanos(0)) return Timeout("store call's deadline passed before its rpc");
  master_calls_->fetch_add(1, std::memory_order_relaxed);
  const Rank master = this->master();
  auto r = rpc_.Call(master, type, request, left);
  if (!r.ok()) {
    if (MasterUnanswered(r.status())) ++master_unanswered_here;
    return r.status().WithContext("store master (rank " + std::to_string(master.value) + ")");
  }
  return r;
}

uint64_t StoreClient::MasterUnansweredOnThisThread() { return master_unanswered_here; }

std::vector<Status> StoreClient::KeysCall(StoreMsg type, std::span<const std::string> keys,
                                          const Deadline& d) {
  auto reply = Call(type, EncodeKeys(keys), d);
  StatusResponse resp;
  Status s = reply.ok() ? Decode(*reply, &resp) : reply.status();
  if (s.ok() && resp.entries.size() != keys.size()) {
    s = ProtocolError("store master answered " + std::to_string(resp.entries.size()) +
                      " statuses for " + std::to_string(keys.size()) + " keys");
  }
  if (!s.ok()) return std::vector<Status>(keys.size(), s);
  std::vector<Status> out;
  out.reserve(keys.size());
  for (const auto& e : resp.entries) out.push_back(FromEntry(e));
  return out;
}

std::vector<Status> StoreClient::Finish(transport::TransferBatch& batch, const Deadline& d) {
  Nanos left = d.Remaining(clock_);
  Status waited = batch.Wait(left > Nanos(0) ? left : Nanos(0));
  std::vector<Status> per = batch.RequestStatus();
  for (auto& s : per) {
    if (s.code() == ErrorCode::kBusy) {
      // The wait's own verdict names the cause (the deadline, or a peer declared dead).
      s = !waited.ok() ? waited : Timeout("transfer still running at deadline");
    }
  }
  return per;
}

Status StoreClient::Put(const std::string& key, std::span<const std::byte> value,
                        const ReplicateConfig& cfg) {
  std::span<const std::byte> values[] = {value};
  return BatchPut(std::span(&key, 1), values, cfg)[0];
}

std::vector<Status> StoreClient::BatchPut(std::span<const std::string> keys,
                                          std::span<const std::span<const std::byte>> values,
                                          const ReplicateConfig& cfg, bool* abandoned,
                                          std::vector<PutUnanswered>* unanswered) {
  const Deadline d = Start();
  const size_t n = keys.size();
  if (unanswered != nullptr) unanswered->assign(n, PutUnanswered::kNo);
  if (values.size() != n || n > kMaxBatchKeys) {
    return std::vector<Status>(n,
                               InvalidArgument("batch put: " + std::to_string(n) + " keys, " +
                                               std::to_string(values.size()) + " values (at most " +
                                               std::to_string(kMaxBatchKeys) + " keys)"));
  }
  // Keys outside the store's limit (store/types.h) are refused here, naming it; the others go on.
  std::vector<size_t> good;
  std::vector<Status> refused(n);
  for (size_t i = 0; i < n; ++i) {
    if (std::string why = KeyProblem(keys[i]); !why.empty()) {
      refused[i] = InvalidArgument("put: " + why);
    } else {
      good.push_back(i);
    }
  }
  if (good.size() != n) {
    std::vector<std::string> gk;
    std::vector<std::span<const std::byte>> gv;
    for (size_t i : good) {
      gk.push_back(keys[i]);
      gv.push_back(values[i]);
    }
    if (!gk.empty()) {
      std::vector<PutUnanswered> part_unanswered;
      std::vector<Status> part = BatchPut(gk, gv, cfg, abandoned, &part_unanswered);
      for (size_t j = 0; j < good.size(); ++j) {
        refused[good[j]] = std::move(part[j]);
        if (unanswered != nullptr) (*unanswered)[good[j]] = part_unanswered[j];
      }
    }
    return refused;
  }
  std::vector<char> retry;
  std::vector<Rank> failing;
  std::vector<PutUnanswered> open;
  std::vector<Status> out = PutOnce(keys, values, cfg, d, &retry, &failing, abandoned, &open);
  if (unanswered != nullptr) *unanswered = open;
  // Keys whose store rank failed their write go again, to the other ranks: until the failure
  // detector declares a dead rank dead, the master would otherwise keep choosing it (the
  // emptiest rank, as it takes nothing new) and every put would fail for the failure timeout.
  for (int attempt = 2; attempt <= kPutAttempts && !failing.empty(); ++attempt) {
    if (d.Remaining(clock_) <= Nanos(0)) break;
    // Best effort: the retry matters.
    (void)Call<SuspectRanksRequest, EmptyMessage>(StoreMsg::kSuspectRanks, {failing}, d);
    std::vector<size_t> again;
    std::vector<std::string> again_keys;
    std::vector<std::span<const std::byte>> again_values;
    for (size_t i = 0; i < n; ++i) {
      if (!retry[i]) continue;
      again.push_back(i);
      again_keys.push_back(keys[i]);
      again_values.push_back(values[i]);
    }
    failing.clear();
    std::vector<Status> second =
        PutOnce(again_keys, again_values, cfg, d, &retry, &failing, abandoned, &open);
    std::vector<char> next(n, 0);
    for (size_t k = 0; k < again.size(); ++k) {
      out[again[k]] = second[k];
      next[again[k]] = retry[k];
      if (unanswered != nullptr) (*unanswered)[again[k]] = open[k];
    }
    retry = std::move(next);
  }
  return out;
}

std::vector<Status> StoreClient::PutOnce(std::span<const std::string> keys,
                                         std::span<const std::span<const std::byte>> values,
                                         const ReplicateConfig& cfg, const Deadline& d,
                                         std::vector<char>* retry, std::vector<Rank>* failing,
                                         bool* abandoned, std::vector<PutUnanswered>* unanswered) {
  const size_t n = keys.size();
  retry->assign(n, 0);
  unanswered->assign(n, PutUnanswered::kNo);
  std::vector<uint64_t> sizes;
  sizes.reserve(n);
  for (const auto& v : values) sizes.push_back(v.size());
  // Only a call that went out can have been left unanswered (the deadline may have passed).
  const bool start_sent = d.Remaining(clock_) > Nanos(0);
  auto reply = Call(StoreMsg::kPutStart, EncodePutStart(cfg, keys, sizes), d);
  // Decoded into this thread's reused answer: no replica vector allocated per key once warm.
  thread_local PutStartResponse scratch;
  PutStartResponse& resp = scratch;
  Status s = reply.ok() ? DecodeInto(*reply, &resp) : reply.status();
  if (s.ok() && resp.entries.size() != n) s = ProtocolError("put-start answer has wrong length");
  if (start_sent && !reply.ok() && MasterUnanswered(reply.status())) {
    unanswered->assign(n, PutUnanswered::kStart);
  }
  if (!s.ok()) return std::vector<Status>(n, s);
  // Every replica of every started key becomes one WRITE; owner[j] is request j's key.
  std::vector<Status> out(n);
  std::vector<transport::TransferRequest> writes;
  std::vector<size_t> owner;
  for (size_t i = 0; i < n; ++i) {
    out[i] = FromEntry(resp.entries[i].status);
    if (!out[i].ok()) continue;
    for (const auto& loc : resp.entries[i].replicas) {
      auto addr = topology_->RemoteAddress(loc);
      if (!addr.ok() || loc.length != values[i].size()) {
        out[i] = addr.ok() ? ProtocolError("replica length differs from the value") : addr.status();
        break;
      }
      // bypass_cache: the store rank's segment is not read again soon, and a put that writes it
      // through this core's cache pays a DRAM read per line first (common/streaming_copy.h).
      writes.push_back({transport::OpKind::kWrite, const_cast<std::byte*>(values[i].data()),
                        loc.rank, *addr, values[i].size(), /*bypass_cache=*/true});
      owner.push_back(i);
    }
  }
  // Each key's checksum is taken from its first replica's write, wave by wave as it leaves.
  std::vector<char> hash(writes.size(), 0);
  std::vector<size_t> first_write(n, SIZE_MAX);
  for (size_t j = 0; j < writes.size(); ++j) {
    if (first_write[owner[j]] == SIZE_MAX) {
      first_write[owner[j]] = j;
      hash[j] = 1;
    }
  }
  std::vector<uint64_t> write_sums(writes.size());
  std::vector<Status> per;
  if (!writes.empty()) per = MoveAndHash(writes, &hash, d, &write_sums);
  std::vector<uint64_t> sums(n);
  for (size_t i = 0; i < n; ++i) {
    if (first_write[i] != SIZE_MAX) sums[i] = write_sums[first_write[i]];
  }
  for (size_t j = 0; j < per.size(); ++j) {
    // A write that timed out or whose rank failed may still be reading the value (UCX sends
    // from it): the caller must keep it, even when a retry below succeeds elsewhere.
    if (abandoned != nullptr && MayStillBeInFlight(per[j])) *abandoned = true;
    if (!per[j].ok() && out[owner[j]].ok()) {
      out[owner[j]] = per[j].WithContext("writing '" + keys[owner[j]] + "' to store rank " +
                                         std::to_string(writes[j].peer.value));
      if (per[j].code() == ErrorCode::kPeerFailure) {
        (*retry)[owner[j]] = 1;
        const Rank peer = writes[j].peer;
        if (std::find(failing->begin(), failing->end(), peer) == failing->end()) {
          failing->push_back(peer);
        }
      }
    }
  }
  EndOrRevoke(keys, sums, resp, d, &out, unanswered);
  return out;
}

// Keys whose writes all succeeded are ended (PutEnd with their checksums); started keys that
// failed are revoked. `out` holds each key's status so far and receives PutEnd's verdict.
void StoreClient::EndOrRevoke(std::span<const std::string> keys, std::span<const uint64_t> sums,
                              const PutStartResponse& started, const Deadline& d,
                              std::vector<Status>* out, std::vector<PutUnanswered>* unanswered) {
  std::vector<const std::string*> end_keys;
  std::vector<uint64_t> end_sums;
  std::vector<std::string> revoke;
  std::vector<size_t> ended;
  for (size_t i = 0; i < keys.size(); ++i) {
    if ((*out)[i].ok()) {
      end_keys.push_back(&keys[i]);
      end_sums.push_back(sums[i]);
      ended.push_back(i);
    } else if (started.entries[i].status.code == ErrorCode::kOk) {
      revoke.push_back(keys[i]);
    }
  }
  if (!end_keys.empty()) {
    const bool end_sent = d.Remaining(clock_) > Nanos(0);  // else nothing can have committed
    auto r = Call(StoreMsg::kPutEnd, EncodePutEnd(end_keys, end_sums), d);
    StatusResponse ends;
    Status e = r.ok() ? Decode(*r, &ends) : r.status();
    if (e.ok() && ends.entries.size() != ended.size()) e = ProtocolError("put-end answer length");
    const bool open = end_sent && !r.ok() && MasterUnanswered(r.status());
    for (size_t k = 0; k < ended.size(); ++k) {
      (*out)[ended[k]] = e.ok() ? FromEntry(ends.entries[k]) : e;
      if (open) (*unanswered)[ended[k]] = PutUnanswered::kEnd;
    }
  }
  if (!revoke.empty()) {
    // Best effort with a fresh deadline: a revoke the master never sees is caught by its timeout.
    (void)KeysCall(StoreMsg::kPutRevoke, revoke, Start());
  }
}

Result<std::vector<uint8_t>> StoreClient::BatchExists(std::span<const std::string> keys) {
  if (keys.size() > kMaxBatchKeys) return InvalidArgument("batch exists: too many keys");
  if (std::string why = KeysProblem(keys); !why.empty()) {
    return InvalidArgument("exists: " + why);
  }
  auto reply = Call(StoreMsg::kExists, EncodeKeys(keys), Start());
  if (!reply.ok()) return reply.status();
  ExistsResponse resp;
  MC_RETURN_IF_ERROR(Decode(*reply, &resp));
  if (resp.exists.size() != keys.size()) return ProtocolError("exists answer has wrong length");
  return std::move(resp.exists);
}

Status StoreClient::Exists(const std::string& key) {
  auto r = BatchExists(std::span(&key, 1));
  if (!r.ok()) return r.status();
  return (*r)[0] ? Status::Ok() : NotFound("object '" + key + "'");
}

std::vector<Status> StoreClient::BatchRemove(std::span<const std::string> keys) {
  if (keys.size() > kMaxBatchKeys) {
    return std::vector<Status>(keys.size(), InvalidArgument("batch remove: too many keys"));
  }
  if (std::string why = KeysProblem(keys); !why.empty()) {
    return std::vector<Status>(keys.size(), InvalidArgument("remove: " + why));
  }
  return KeysCall(StoreMsg::kRemove, keys, Start());
}

Status StoreClient::Remove(const std::string& key) { return BatchRemove(std::span(&key, 1))[0]; }

Result<StatsResponse> StoreClient::MasterStats() {
  return Call<EmptyMessage, StatsResponse>(StoreMsg::kStats, {}, Start());
}

}  // namespace mooncake::store
