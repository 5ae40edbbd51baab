// StoreClient: get. One get RPC for the batch, then rounds of one transfer batch each: round k
// reads every still-unserved key from its k-th DRAM replica, so a failed store rank or a corrupt
// copy costs one more round only for the keys it touched.
#include <xxh_x86dispatch.h>
#include <xxhash.h>

#include <memory>

#include "store/net/client.h"

namespace mooncake::store {

namespace {
std::vector<ReplicaLocation> DramReplicas(const ObjectView& v) {
  std::vector<ReplicaLocation> out;
  for (const auto& r : v.replicas) {
    if (r.tier == Tier::kDram) out.push_back(r);
  }
  return out;
}

// Sorts the master's answer: keys it refused keep its status; keys with DRAM replicas go to
// `pending` (read in rounds), keys on SSD only to `ssd_pending`; a buffer too small is refused.
void SortGets(std::span<const std::string> keys, std::span<const std::span<std::byte>> outs,
              const GetResponse& resp, std::vector<Status>* status,
              std::vector<std::vector<ReplicaLocation>>* replicas, std::vector<size_t>* pending,
              std::vector<size_t>* ssd_pending) {
  for (size_t i = 0; i < keys.size(); ++i) {
    const GetEntry& e = resp.entries[i];
    (*status)[i] = FromEntry(e.status);
    if (!(*status)[i].ok()) continue;
    (*replicas)[i] = DramReplicas(e.view);
    if (outs[i].size() < e.view.size) {
      (*status)[i] = InvalidArgument("buffer of " + std::to_string(outs[i].size()) + " B for '" +
                                     keys[i] + "' of " + std::to_string(e.view.size) + " B");
    } else if ((*replicas)[i].empty()) {
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
  KeysRequest req{{key}};
  auto reply = Call(StoreMsg::kGet, Encode(req), Start());
  if (!reply.ok()) return reply.status();
  GetResponse resp;
  MC_RETURN_IF_ERROR(Decode(*reply, &resp));
  if (resp.entries.size() != 1) return ProtocolError("get answer has wrong length");
  MC_RETURN_IF_ERROR(FromEntry(resp.entries[0].status));
  return std::move(resp.entries[0].view);
}

Result<std::vector<std::byte>> StoreClient::GetValue(const std::string& key) {
  // The size is not known before the master answers: ask, size the buffer, then read (objects
  // are immutable, so only a remove and re-put in between can change it: InvalidArgument then).
  auto view = Lookup(key);
  if (!view.ok()) return view.status();
  std::vector<std::byte> buf(view->size);
  auto n = Get(key, buf);
  if (!n.ok()) return n.status();
  buf.resize(*n);
  return buf;
}

Result<uint64_t> StoreClient::GetSize(const std::string& key) {
  auto view = Lookup(key);
  if (!view.ok()) return view.status();
  return view->size;
}

std::vector<Result<std::vector<std::byte>>> StoreClient::BatchGetValues(
    std::span<const std::string> keys) {
  using Value = Result<std::vector<std::byte>>;
  const size_t n = keys.size();
  if (n > kMaxBatchKeys) return std::vector<Value>(n, InvalidArgument("batch get: too many keys"));
  if (std::string why = KeysProblem(keys); !why.empty()) {
    return std::vector<Value>(n, InvalidArgument("get: " + why));
  }
  // Sizes first (one RPC), then the reads into buffers of those sizes (BatchGet).
  KeysRequest req{std::vector<std::string>(keys.begin(), keys.end())};
  auto reply = Call(StoreMsg::kGet, Encode(req), Start());
  if (!reply.ok()) return std::vector<Value>(n, reply.status());
  GetResponse resp;
  Status decoded = Decode(*reply, &resp);
  if (decoded.ok() && resp.entries.size() != n) {
    decoded = ProtocolError("get answer has wrong length");
  }
  if (!decoded.ok()) return std::vector<Value>(n, decoded);
  std::vector<Value> out(n, Internal("not read"));
  std::vector<std::vector<std::byte>> bufs(n);
  std::vector<std::string> found_keys;
  std::vector<std::span<std::byte>> found_outs;
  std::vector<size_t> found;
  for (size_t i = 0; i < n; ++i) {
    Status s = FromEntry(resp.entries[i].status);
    if (!s.ok()) {
      out[i] = s;
      continue;
    }
    bufs[i].resize(resp.entries[i].view.size);
    found.push_back(i);
  }
  for (size_t i : found) {
    found_keys.push_back(keys[i]);
    found_outs.emplace_back(bufs[i]);
  }
  auto got = BatchGet(found_keys, found_outs);
  for (size_t j = 0; j < found.size(); ++j) {
    const size_t i = found[j];
    if (!got[j].ok()) {
      out[i] = got[j].status();
      continue;
    }
    bufs[i].resize(*got[j]);
    out[i] = std::move(bufs[i]);
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
  KeysRequest req{std::vector<std::string>(keys.begin(), keys.end())};
  auto reply = Call(StoreMsg::kGet, Encode(req), d);
  GetResponse resp;
  Status s = reply.ok() ? Decode(*reply, &resp) : reply.status();
  if (s.ok() && resp.entries.size() != n) s = ProtocolError("get answer has wrong length");
  if (!s.ok()) return std::vector<Result<size_t>>(n, s);

  std::vector<Status> status(n);
  std::vector<std::vector<ReplicaLocation>> replicas(n);
  std::vector<size_t> pending;      // keys still to read
  std::vector<size_t> ssd_pending;  // keys with SSD replicas only
  SortGets(keys, outs, resp, &status, &replicas, &pending, &ssd_pending);
  for (size_t round = 0; !pending.empty(); ++round) {
    std::vector<transport::TransferRequest> reads;
    std::vector<size_t> owner;
    std::vector<size_t> next;
    for (size_t i : pending) {
      if (round >= replicas[i].size()) continue;  // status keeps the last replica's failure
      const ReplicaLocation& loc = replicas[i][round];
      auto addr = topology_.RemoteAddress(loc);
      if (!addr.ok()) {
        status[i] = addr.status();
        next.push_back(i);
        continue;
      }
      reads.push_back({transport::OpKind::kRead, outs[i].data(), loc.rank, *addr,
                       static_cast<size_t>(resp.entries[i].view.size)});
      owner.push_back(i);
    }
    std::vector<uint64_t> sums(reads.size());
    std::vector<Status> per =
        MoveAndHash(reads, nullptr, d, cfg_.verify_checksum ? &sums : nullptr);
    const Nanos done = clock_.Now();
    for (size_t j = 0; j < per.size(); ++j) {
      const size_t i = owner[j];
      const ObjectView& v = resp.entries[i].view;
      const std::string from = "store rank " + std::to_string(reads[j].peer.value);
      if (!per[j].ok()) {
        if (abandoned != nullptr && MayStillBeInFlight(per[j])) *abandoned = true;
        status[i] = per[j].WithContext("reading '" + keys[i] + "' from " + from);
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
                              : Corrupt("'" + keys[i] + "' from " + from + " fails its checksum");
          if (!expired) next.push_back(i);
          continue;
        }
      }
      status[i] = Status::Ok();
    }
    pending = std::move(next);
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
