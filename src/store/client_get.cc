// StoreClient: get. One get RPC for the batch, then rounds of one transfer batch each: round k
// reads every still-unserved key from its k-th DRAM replica, so a failed store rank or a corrupt
// copy costs one more round only for the keys it touched.
#include <xxh_x86dispatch.h>
#include <xxhash.h>

#include <memory>

#include "store/client.h"

namespace mooncake::store {

namespace {
std::vector<ReplicaLocation> DramReplicas(const ObjectView& v) {
  std::vector<ReplicaLocation> out;
  for (const auto& r : v.replicas) {
    if (r.tier == Tier::kDram) out.push_back(r);
  }
  return out;
}
struct StateFree {
  void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
};
}  // namespace

// Reads every request; with `sums`, also hashes each request's bytes (XXH3-64, the value
// Checksum64 gives, through libxxhash's runtime-dispatched AVX2/AVX-512 code: ~3x its default).
// The reads are cut into waves of kWaveBytes, hashed wave by wave while the bytes are still in
// this core's cache (128 KiB: a get/raw ratio of ~0.8 at 1 and 16 MiB, against ~0.7 for 512 KiB
// and ~0.6 for a helper thread hashing on the other core; docs/STORE.md).
std::vector<Status> StoreClient::ReadAll(const std::vector<transport::TransferRequest>& reads,
                                         const Deadline& d, std::vector<uint64_t>* sums) {
  // Without hashing there is nothing to interleave: one wave.
  const size_t kWaveBytes = sums != nullptr ? 128 * 1024 : SIZE_MAX;
  struct Piece {
    size_t request;
    size_t offset;
  };
  std::vector<std::vector<Piece>> waves(1);
  std::vector<std::vector<transport::TransferRequest>> wave_reqs(1);
  size_t wave_bytes = 0;
  for (size_t j = 0; j < reads.size(); ++j) {
    for (size_t off = 0; off < reads[j].length || off == 0; off += kWaveBytes) {
      if (wave_bytes >= kWaveBytes) {
        waves.emplace_back();
        wave_reqs.emplace_back();
        wave_bytes = 0;
      }
      size_t len = std::min(kWaveBytes, reads[j].length - off);
      transport::TransferRequest r = reads[j];
      r.local = static_cast<std::byte*>(r.local) + off;
      r.remote_addr += off;
      r.length = len;
      waves.back().push_back({j, off});
      wave_reqs.back().push_back(r);
      wave_bytes += len;
      if (reads[j].length == 0) break;
    }
  }
  std::vector<Status> out(reads.size());
  std::vector<std::unique_ptr<XXH3_state_t, StateFree>> states(reads.size());
  for (auto& st : states) {
    if (sums == nullptr) break;
    st.reset(XXH3_createState());
    XXH3_64bits_reset(st.get());
  }
  auto submit = [&](size_t w) -> std::unique_ptr<transport::TransferBatch> {
    auto b = transport_.Submit(wave_reqs[w]);
    if (b.ok()) return std::move(*b);
    for (const auto& p : waves[w]) out[p.request] = b.status();
    return nullptr;
  };
  std::unique_ptr<transport::TransferBatch> current = submit(0);
  for (size_t w = 0; w < waves.size(); ++w) {
    // When the transport moves bytes in the background (tcp, rdma), post the next wave before
    // waiting on this one: the link works while this thread hashes. When this wave finished
    // inside Submit (shared memory: the copy ran on this thread), hash it first, while it is in
    // this core's cache, and copy the next one after.
    const bool copied_inline =
        current == nullptr || current->Poll() != transport::BatchState::kInProgress;
    const bool has_next = w + 1 < waves.size();
    std::unique_ptr<transport::TransferBatch> next;
    if (has_next && !copied_inline) next = submit(w + 1);
    std::vector<char> ok(waves[w].size(), 0);
    if (current) {
      std::vector<Status> per = Finish(*current, d);
      for (size_t k = 0; k < per.size(); ++k) {
        const Piece& p = waves[w][k];
        if (!per[k].ok() && out[p.request].ok()) out[p.request] = per[k];
        ok[k] = out[p.request].ok() ? 1 : 0;
      }
    }
    for (size_t k = 0; sums != nullptr && k < waves[w].size(); ++k) {
      if (!ok[k]) continue;  // that request failed: its sum is never used
      const Piece& p = waves[w][k];
      XXH3_64bits_update_dispatch(states[p.request].get(),
                                  static_cast<std::byte*>(reads[p.request].local) + p.offset,
                                  wave_reqs[w][k].length);
    }
    if (has_next && copied_inline) next = submit(w + 1);
    current = std::move(next);
  }
  if (sums != nullptr) {
    for (size_t j = 0; j < reads.size(); ++j) (*sums)[j] = XXH3_64bits_digest(states[j].get());
  }
  return out;
}

Result<size_t> StoreClient::Get(const std::string& key, std::span<std::byte> out) {
  std::span<std::byte> outs[] = {out};
  return BatchGet(std::span(&key, 1), outs)[0];
}

Result<std::vector<std::byte>> StoreClient::GetValue(const std::string& key) {
  // The size is not known before the master answers: ask, size the buffer, then read (objects
  // are immutable, so only a remove and re-put in between can change it: InvalidArgument then).
  KeysRequest req{{key}};
  auto reply = Call(StoreMsg::kGet, Encode(req), Start());
  if (!reply.ok()) return reply.status();
  GetResponse resp;
  MC_RETURN_IF_ERROR(Decode(*reply, &resp));
  if (resp.entries.size() != 1) return ProtocolError("get answer has wrong length");
  MC_RETURN_IF_ERROR(FromEntry(resp.entries[0].status));
  std::vector<std::byte> buf(resp.entries[0].view.size);
  auto n = Get(key, buf);
  if (!n.ok()) return n.status();
  buf.resize(*n);
  return buf;
}

std::vector<Result<size_t>> StoreClient::BatchGet(std::span<const std::string> keys,
                                                  std::span<const std::span<std::byte>> outs) {
  const Deadline d = Start();
  const size_t n = keys.size();
  if (outs.size() != n || n > kMaxBatchKeys) {
    return std::vector<Result<size_t>>(n, InvalidArgument("batch get: keys and buffers differ"));
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
  for (size_t i = 0; i < n; ++i) {
    const GetEntry& e = resp.entries[i];
    status[i] = FromEntry(e.status);
    if (!status[i].ok()) continue;
    replicas[i] = DramReplicas(e.view);
    if (outs[i].size() < e.view.size) {
      status[i] = InvalidArgument("buffer of " + std::to_string(outs[i].size()) + " B for '" +
                                  keys[i] + "' of " + std::to_string(e.view.size) + " B");
    } else if (replicas[i].empty()) {
      // SSD-resident only: read through the store rank holding it (client_ssd.cc).
      status[i] = NotFound("object '" + keys[i] + "' has no DRAM replica");
      ssd_pending.push_back(i);
    } else {
      status[i] = Internal("not read");
      pending.push_back(i);
    }
  }
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
    std::vector<Status> per = ReadAll(reads, d, cfg_.verify_checksum ? &sums : nullptr);
    const Nanos done = clock_.Now();
    for (size_t j = 0; j < per.size(); ++j) {
      const size_t i = owner[j];
      const ObjectView& v = resp.entries[i].view;
      const std::string from = "store rank " + std::to_string(reads[j].peer.value);
      if (!per[j].ok()) {
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
  if (!ssd_pending.empty()) ReadFromSsd(keys, outs, resp, ssd_pending, d, &status);
  std::vector<Result<size_t>> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (status[i].ok()) {
      out.push_back(static_cast<size_t>(resp.entries[i].view.size));
    } else {
      out.push_back(status[i]);
    }
  }
  return out;
}

}  // namespace mooncake::store
