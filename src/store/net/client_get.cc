// StoreClient: get. One get RPC for the batch, then rounds of one transfer batch each: round k
// reads every still-unserved key from its k-th DRAM replica, so a failed store rank or a corrupt
// copy costs one more round only for the keys it touched.
#include <xxh_x86dispatch.h>
#include <xxhash.h>

#include <memory>

#include "store/net/client.h"

namespace mooncake::store {

namespace {
// The first DRAM replica of `v` at or after index *next (advancing *next past it), or null.
// A key's cursor moves one DRAM replica per round, without a copy of its replica list.
const ReplicaLocation* NextDramReplica(const ObjectView& v, uint32_t* next) {
  while (*next < v.replicas.size()) {
    const ReplicaLocation& r = v.replicas[(*next)++];
    if (r.tier == Tier::kDram) return &r;
  }
  return nullptr;
}

bool HasDramReplica(const ObjectView& v) {
  for (const auto& r : v.replicas) {
    if (r.tier == Tier::kDram) return true;
  }
  return false;
}

// Sorts the master's answer: keys it refused keep its status; keys with DRAM replicas go to
// `pending` (read in rounds), keys on SSD only to `ssd_pending`; a buffer too small is refused.
void SortGets(std::span<const std::string> keys, std::span<const std::span<std::byte>> outs,
              const GetResponse& resp, std::vector<Status>* status, std::vector<size_t>* pending,
              std::vector<size_t>* ssd_pending) {
  for (size_t i = 0; i < keys.size(); ++i) {
    const GetEntry& e = resp.entries[i];
    if (e.status.code != ErrorCode::kOk) {
      (*status)[i] = FromEntry(e.status);
    } else if (outs[i].size() < e.view.size) {
      (*status)[i] = InvalidArgument("buffer of " + std::to_string(outs[i].size()) + " B for '" +
                                     keys[i] + "' of " + std::to_string(e.view.size) + " B");
    } else if (!HasDramReplica(e.view)) {
      // SSD-resident only: read through the store rank holding it (client_ssd.cc).
      (*status)[i] = NotFound("object '" + keys[i] + "' has no DRAM replica");
      ssd_pending->push_back(i);
    } else {
      (*status)[i] = Internal("not read");
      pending->push_back(i);
    }
  }
}

}  // namespace

bool StoreClient::MayStillBeInFlight(const Status& s) {
  return s.code() == ErrorCode::kTimeout || s.code() == ErrorCode::kPeerFailure;
}

Result<size_t> StoreClient::Get(const std::string& key, std::span<std::byte> out) {
  std::span<std::byte> outs[] = {out};
  return BatchGet(std::span(&key, 1), outs)[0];
}

Result<ObjectView> StoreClient::Lookup(const std::string& key) {
  if (std::string why = KeysProblem(std::span(&key, 1)); !why.empty()) {
    return InvalidArgument("get: " + why);
  }
  GetResponse resp;
  MC_RETURN_IF_ERROR(LookupBatch(std::span(&key, 1), Start(), &resp));
  MC_RETURN_IF_ERROR(FromEntry(resp.entries[0].status));
  return std::move(resp.entries[0].view);
}

GetResponse& StoreClient::ReplyScratch() {
  thread_local GetResponse scratch;
  return scratch;
}

Status StoreClient::LookupBatch(std::span<const std::string> keys, const Deadline& d,
                                GetResponse* resp) {
  auto reply = Call(StoreMsg::kGet, EncodeKeys(keys), d);
  if (!reply.ok()) return reply.status();
  MC_RETURN_IF_ERROR(DecodeInto(*reply, resp));
  if (resp->entries.size() != keys.size()) return ProtocolError("get answer has wrong length");
  return Status::Ok();
}

Result<std::vector<std::byte>> StoreClient::GetValue(const std::string& key) {
  return std::move(BatchGetValues(std::span(&key, 1))[0]);
}

Result<uint64_t> StoreClient::GetSize(const std::string& key) {
  auto view = Lookup(key);
  if (!view.ok()) return view.status();
  return view->size;
}

std::vector<Result<std::vector<std::byte>>> StoreClient::BatchGetValues(
    std::span<const std::string> keys) {
  using Value = Result<std::vector<std::byte>>;
  const Deadline d = Start();
  const size_t n = keys.size();
  if (n > kMaxBatchKeys) return std::vector<Value>(n, InvalidArgument("batch get: too many keys"));
  if (std::string why = KeysProblem(keys); !why.empty()) {
    return std::vector<Value>(n, InvalidArgument("get: " + why));
  }
  // One RPC: the master's answer gives every size, the buffers are sized from it and the reads
  // go straight on (a lookup for the sizes and then a get would be two round trips).
  const Nanos sent = clock_.Now();
  GetResponse& resp = ReplyScratch();
  if (Status s = LookupBatch(keys, d, &resp); !s.ok()) return std::vector<Value>(n, s);
  std::vector<std::vector<std::byte>> bufs(n);
  std::vector<std::span<std::byte>> outs(n);
  for (size_t i = 0; i < n; ++i) {
    if (resp.entries[i].status.code != ErrorCode::kOk) continue;
    bufs[i].resize(resp.entries[i].view.size);
    outs[i] = bufs[i];
  }
  bool abandoned = false;
  auto got = ReadFound(keys, outs, resp, sent, d, &abandoned);
  std::vector<Value> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!got[i].ok()) {
      out.emplace_back(got[i].status());
    } else if (abandoned) {
      out.emplace_back(bufs[i]);  // a copy: the buffers stay with the transport (below)
    } else {
      out.emplace_back(std::move(bufs[i]));
    }
  }
  // A read given up while in flight may still write into its buffer (even a key that a later
  // replica then served): every buffer of the call lives until the transport closes.
  if (abandoned) {
    transport_.RetainUntilClosed(
        std::make_shared<std::vector<std::vector<std::byte>>>(std::move(bufs)));
  }
  return out;
}

std::vector<Result<size_t>> StoreClient::BatchGet(std::span<const std::string> keys,
                                                  std::span<const std::span<std::byte>> outs,
                                                  bool* abandoned) {
  const Deadline d = Start();
  const size_t n = keys.size();
  if (outs.size() != n || n > kMaxBatchKeys) {
    return std::vector<Result<size_t>>(n, InvalidArgument("batch get: keys and buffers differ"));
  }
  if (std::string why = KeysProblem(keys); !why.empty()) {
    return std::vector<Result<size_t>>(n, InvalidArgument("get: " + why));
  }
  const Nanos sent = clock_.Now();
  // The answer is decoded into this thread's reused GetResponse: once it has held a batch this
  // large, a get allocates nothing per key for it (one replica vector each before).
  GetResponse& resp = ReplyScratch();
  if (Status s = LookupBatch(keys, d, &resp); !s.ok()) return std::vector<Result<size_t>>(n, s);
  return ReadFound(keys, outs, resp, sent, d, abandoned);
}

std::vector<Result<size_t>> StoreClient::ReadFound(std::span<const std::string> keys,
                                                   std::span<const std::span<std::byte>> outs,
                                                   const GetResponse& resp, Nanos sent,
                                                   const Deadline& d, bool* abandoned) {
  const size_t n = keys.size();
  std::vector<Status> status(n);
  std::vector<size_t> pending;      // keys still to read
  std::vector<size_t> ssd_pending;  // keys with SSD replicas only
  SortGets(keys, outs, resp, &status, &pending, &ssd_pending);
  std::vector<uint32_t> cursor(n, 0);  // each key's next replica (NextDramReplica)
  std::vector<transport::TransferRequest> reads;
  std::vector<size_t> owner;
  std::vector<size_t> next;
  std::vector<uint64_t> sums;
  while (!pending.empty()) {
    reads.clear();
    owner.clear();
    next.clear();
    for (size_t i : pending) {
      const ReplicaLocation* loc = NextDramReplica(resp.entries[i].view, &cursor[i]);
      if (loc == nullptr) continue;  // status keeps the last replica's failure
      auto addr = topology_->RemoteAddress(*loc);
      if (!addr.ok()) {
        status[i] = addr.status();
        next.push_back(i);
        continue;
      }
      reads.push_back({transport::OpKind::kRead, outs[i].data(), loc->rank, *addr,
                       static_cast<size_t>(resp.entries[i].view.size)});
      owner.push_back(i);
    }
    sums.assign(reads.size(), 0);
    std::vector<Status> per =
        MoveAndHash(reads, nullptr, d, cfg_.verify_checksum ? &sums : nullptr);
    const Nanos done = clock_.Now();
    for (size_t j = 0; j < per.size(); ++j) {
      const size_t i = owner[j];
      const ObjectView& v = resp.entries[i].view;
      auto from = [&] { return "store rank " + std::to_string(reads[j].peer.value); };
      if (!per[j].ok()) {
        if (abandoned != nullptr && MayStillBeInFlight(per[j])) *abandoned = true;
        status[i] = per[j].WithContext("reading '" + keys[i] + "' from " + from());
        if (status[i].code() != ErrorCode::kTimeout) next.push_back(i);
        continue;
      }
      const bool expired = done - sent > v.lease;
      if (cfg_.verify_checksum || expired) {
        uint64_t sum =
            cfg_.verify_checksum ? sums[j] : XXH3_64bits_dispatch(outs[i].data(), v.size);
        if (sum != v.checksum) {
          status[i] = expired ? Status(ErrorCode::kLeaseExpired,
                                       "lease on '" + keys[i] + "' ran out during the read")
                              : Corrupt("'" + keys[i] + "' from " + from() + " fails its checksum");
          if (!expired) next.push_back(i);
          continue;
        }
      }
      status[i] = Status::Ok();
    }
    pending.swap(next);
  }
  if (!ssd_pending.empty()) {
    ReadFromSsd(keys, outs, resp, ssd_pending, d, &status);
    for (size_t i : ssd_pending) {
      if (abandoned != nullptr && MayStillBeInFlight(status[i])) *abandoned = true;
    }
  }
  std::vector<Result<size_t>> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(status[i].ok() ? Result<size_t>(static_cast<size_t>(resp.entries[i].view.size))
                                 : Result<size_t>(status[i]));
  }
  return out;
}

}  // namespace mooncake::store
