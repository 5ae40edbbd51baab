// StoreClient: gets of SSD-resident objects. The keys are cut into pieces per store rank (a
// quarter of the rank's share, kSsdMinPieceBytes..kSsdPieceBytes) and up to kSsdPiecesInFlight
// pieces run at once, so the store rank reads the next piece from its disk while this client
// copies the last one. For each piece the store rank holding it reads the blocks into its
// registered staging region (several reads in flight) and answers where they are (kSsdStage);
// the client READs them one-sided straight into the caller's buffers (over shared memory one
// memcpy from the mapped region, hashed while in cache, client_move.cc), verifies them against
// the master's checksum (or, when this client does not verify, the tier did before staging),
// and releases the room (kSsdRelease). A store rank without a staging region answers
// NotSupported; that piece then comes back inside the RPC reply (kSsdRead), as before staging.
#include <xxh_x86dispatch.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "common/checksum.h"
#include "store/net/client.h"
#include "store/net/ssd_messages.h"

namespace mooncake::store {

namespace {
// A piece is a few MiB: large enough that its RPC is cheap next to its bytes, small enough
// that several fit in the store rank's staging region (64 MiB by default) at once.
constexpr uint64_t kSsdPieceBytes = 8ull << 20;
constexpr uint64_t kSsdMinPieceBytes = 1ull << 20;
constexpr size_t kSsdPiecesInFlight = 4;

const ReplicaLocation* SsdReplica(const ObjectView& v) {
  for (const auto& r : v.replicas) {
    if (r.tier == Tier::kSsd) return &r;
  }
  return nullptr;
}
}  // namespace

struct StoreClient::SsdPiece {
  Rank rank;
  std::vector<size_t> keys;  // indices into the call's keys
  std::string From() const { return "SSD of store rank " + std::to_string(rank.value); }
};

void StoreClient::ReadFromSsd(std::span<const std::string> keys,
                              std::span<const std::span<std::byte>> outs, const GetResponse& resp,
                              const std::vector<size_t>& which, const Deadline& d,
                              std::vector<Status>* status) {
  // Each rank's share is cut into up to kSsdPiecesInFlight pieces (kSsdMinPieceBytes ..
  // kSsdPieceBytes each), so one call of a few MiB keeps the store rank and this client busy at
  // the same time; smaller pieces cost more hops than they overlap (64 KiB blocks: 1.7 GB/s
  // with 1 MiB pieces against 0.8 with 256 KiB ones, interleaved runs).
  std::map<Rank, uint64_t> total;
  for (size_t i : which) {
    if (const ReplicaLocation* ssd = SsdReplica(resp.entries[i].view)) {
      total[ssd->rank] += resp.entries[i].view.size;
    }
  }
  std::vector<SsdPiece> pieces;
  std::map<Rank, size_t> open;  // rank -> its piece still taking keys
  std::map<Rank, uint64_t> bytes;
  for (size_t i : which) {
    const ObjectView& v = resp.entries[i].view;
    const ReplicaLocation* ssd = SsdReplica(v);
    if (ssd == nullptr) continue;  // keeps NotFound
    if (v.size > kMaxSsdReadBytes) {
      (*status)[i] = InvalidArgument("SSD-resident '" + keys[i] + "' is larger than an SSD read");
      continue;
    }
    auto it = open.find(ssd->rank);
    if (it == open.end() || pieces[it->second].keys.size() >= kMaxBatchKeys ||
        bytes[ssd->rank] + v.size >
            std::clamp(total[ssd->rank] / kSsdPiecesInFlight, kSsdMinPieceBytes, kSsdPieceBytes)) {
      it = open.insert_or_assign(ssd->rank, pieces.size()).first;
      pieces.push_back(SsdPiece{ssd->rank, {}});
      bytes[ssd->rank] = 0;
    }
    pieces[it->second].keys.push_back(i);
    bytes[ssd->rank] += v.size;
  }
  const SsdGet g{keys, outs, resp, d, status};
  std::atomic<size_t> next{0};  // each worker takes the next piece; keys never overlap
  auto work = [&] {
    for (size_t p; (p = next.fetch_add(1)) < pieces.size();) ReadSsdPiece(g, pieces[p]);
  };
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < std::min(pieces.size(), kSsdPiecesInFlight); ++t)
    helpers.emplace_back(work);
  work();
  for (auto& t : helpers) t.join();
}

void StoreClient::ReadSsdPiece(const SsdGet& g, const SsdPiece& piece) {
  SsdStageRequest req;
  for (size_t i : piece.keys) {
    req.keys.push_back(g.keys[i]);
    req.versions.push_back(g.resp.entries[i].view.version);
  }
  req.client_verifies = cfg_.verify_checksum ? 1 : 0;
  const Nanos sent = clock_.Now();
  Nanos left = g.d.Remaining(clock_);
  auto reply = left > Nanos(0) ? rpc_.Call(piece.rank, SsdMsg::kSsdStage, Encode(req), left)
                               : Result<std::vector<std::byte>>(Timeout("deadline passed"));
  if (!reply.ok() && reply.status().code() == ErrorCode::kNotSupported) {
    return ReadSsdInReply(g, piece);  // a store rank without a staging region
  }
  SsdStageResponse r;
  Status s = reply.ok() ? Decode(*reply, &r) : reply.status();
  if (s.ok() && r.entries.size() != piece.keys.size()) s = ProtocolError("SSD stage answer length");
  std::pair<uint64_t, uint64_t> region{0, 0};  // the staging region's [addr, addr + length)
  if (s.ok() && r.ticket != 0) {
    auto imported = ImportStaging(piece.rank, r.staging);
    if (imported.ok()) {
      region = *imported;
    } else {
      s = imported.status();
    }
  }
  std::vector<transport::TransferRequest> reads;
  std::vector<size_t> owner;
  for (size_t j = 0; j < piece.keys.size(); ++j) {
    const size_t i = piece.keys[j];
    Status& out = (*g.status)[i];
    out = s.ok() ? FromEntry(r.entries[j].status) : s;
    if (out.ok()) {
      const SsdStagedEntry& e = r.entries[j];
      const bool inside = e.remote_addr >= region.first && e.length <= region.second &&
                          e.remote_addr - region.first <= region.second - e.length;
      if (e.length != g.resp.entries[i].view.size || !inside) {
        out = ProtocolError("staged as " + std::to_string(e.length) +
                            " B, outside the staging region or of the wrong size");
      } else {
        reads.push_back({transport::OpKind::kRead, g.outs[i].data(), piece.rank, e.remote_addr,
                         static_cast<size_t>(e.length)});
        owner.push_back(i);
      }
    }
    if (!out.ok()) out = out.WithContext("reading '" + g.keys[i] + "' from " + piece.From());
  }
  std::vector<uint64_t> sums(reads.size());
  std::vector<Status> per =
      MoveAndHash(reads, nullptr, g.d, cfg_.verify_checksum ? &sums : nullptr);
  if (r.ticket != 0) {
    SsdReleaseNotice n{r.ticket};
    (void)rpc_.Notify(piece.rank, SsdMsg::kSsdRelease, Encode(n));
  }
  // A read that ended after the staging lease may have seen other bytes: only its checksum can
  // tell (checked even with verification off, as for DRAM gets).
  const bool expired = clock_.Now() - sent > r.lease;
  for (size_t j = 0; j < per.size(); ++j) {
    const size_t i = owner[j];
    const ObjectView& v = g.resp.entries[i].view;
    Status& out = (*g.status)[i];
    out = per[j].WithContext("reading '" + g.keys[i] + "' from the staging of " + piece.From());
    if (!out.ok() || !(cfg_.verify_checksum || expired)) continue;
    const uint64_t sum =
        cfg_.verify_checksum ? sums[j] : XXH3_64bits_dispatch(g.outs[i].data(), v.size);
    if (sum != v.checksum) {
      out = expired ? Status(ErrorCode::kLeaseExpired,
                             "staging lease on '" + g.keys[i] + "' ran out during the read")
                    : Corrupt("'" + g.keys[i] + "' from " + piece.From() + " fails its checksum");
    }
  }
}

Result<std::pair<uint64_t, uint64_t>> StoreClient::ImportStaging(Rank rank,
                                                                 std::span<const std::byte> desc) {
  std::lock_guard<std::mutex> lock(staging_->mu);
  auto known = staging_->encoded.find(rank.value);
  if (known != staging_->encoded.end() &&
      std::equal(known->second.begin(), known->second.end(), desc.begin(), desc.end())) {
    return staging_->range.at(rank.value);
  }
  auto d = transport::RemoteDescriptor::Decode(desc);
  if (!d.ok())
    return d.status().WithContext("staging region of store rank " + std::to_string(rank.value));
  MC_RETURN_IF_ERROR(transport_.Import(rank, *d));
  staging_->encoded[rank.value].assign(desc.begin(), desc.end());
  return staging_->range[rank.value] = {d->addr, d->length};
}

void StoreClient::ReadSsdInReply(const SsdGet& g, const SsdPiece& piece) {
  SsdStageRequest req;  // kSsdRead takes the same (key, version) list
  for (size_t i : piece.keys) {
    req.keys.push_back(g.keys[i]);
    req.versions.push_back(g.resp.entries[i].view.version);
  }
  Nanos left = g.d.Remaining(clock_);
  Result<std::vector<std::byte>> reply =
      left > Nanos(0) ? rpc_.Call(piece.rank, SsdMsg::kSsdRead, Encode(req), left)
                      : Result<std::vector<std::byte>>(Timeout("deadline passed"));
  SsdReadResponse r;
  Status s = reply.ok() ? Decode(*reply, &r) : reply.status();
  if (s.ok() && r.entries.size() != piece.keys.size()) s = ProtocolError("SSD read answer length");
  for (size_t j = 0; j < piece.keys.size(); ++j) {
    const size_t i = piece.keys[j];
    const ObjectView& v = g.resp.entries[i].view;
    if (!s.ok()) {
      (*g.status)[i] = s.WithContext("reading '" + g.keys[i] + "' from " + piece.From());
      continue;
    }
    Status e = FromEntry(r.entries[j].status);
    const auto& b = r.entries[j].bytes;
    if (e.ok() && b.size() != v.size) {
      e = Corrupt("'" + g.keys[i] + "' from " + piece.From() + " has " + std::to_string(b.size()) +
                  " B");
    }
    if (e.ok() && cfg_.verify_checksum && Checksum64(b.data(), b.size()) != v.checksum) {
      e = Corrupt("'" + g.keys[i] + "' from " + piece.From() + " fails its checksum");
    }
    if (e.ok()) std::copy(b.begin(), b.end(), g.outs[i].begin());
    (*g.status)[i] = e;
  }
}

}  // namespace mooncake::store
