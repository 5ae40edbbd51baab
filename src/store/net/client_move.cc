// StoreClient::MoveAndHash: the data path of gets and puts. Every request's bytes are hashed
// (XXH3-64, the value Checksum64 gives, through libxxhash's runtime-dispatched AVX2/AVX-512
// code) as close as possible to the copy:
//  - A store segment mapped into this process (shared memory: Transport::MappedAddress) is
//    copied here, in 16 KiB chunks, each hashed while in L1: a put hashes its chunk, then
//    streams it into the segment; a get copies a chunk (streamed into the caller's buffer from
//    256 KiB up), then hashes the segment's chunk, whose lines the copy just read. Neither
//    destination is read back, so a 1 GiB footprint costs one DRAM read and one DRAM write per
//    line: a verified 1 MiB get runs at about the speed of a plain cached copy (docs/STORE.md).
//  - Otherwise (tcp, rdma) every request goes through the transport in groups of about
//    256 KiB, all in flight at once, each hashed before it is posted (writes) or as soon as it
//    has arrived (reads), while the others move. A call that times out returns once its
//    transfers have stopped (or after one more timeout at most).
// Calls of 4 MiB or more over mapped segments are split over StoreClientConfig::copy_threads
// threads (one core's copy is bound by its own memory bandwidth; docs/STORE.md).
#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t's layout: hash states live on the stack
#include <xxh_x86dispatch.h>
#include <xxhash.h>

#include <cstring>
#include <memory>
#include <thread>

#include "common/streaming_copy.h"
#include "store/net/client.h"

namespace mooncake::store {
namespace {

// Between two such pieces of a hash the network path drives the transport (MoveGroup).
constexpr size_t kHashPiece = 256 * 1024;
// Below this a call stays on one thread (starting one costs tens of microseconds).
constexpr size_t kSplitBytes = 4 * 1024 * 1024;
// The grain of a mapped copy: a chunk and its hash stay in L1 (48 KiB here).
constexpr size_t kMappedChunk = 16 * 1024;
// Gets of at least this size stream into the caller's buffer (common/streaming_copy.h): a value
// this large does not stay in L2 for its consumer anyway, and skipping the read-for-ownership of
// the destination is what lets a verified get outrun a plain cached copy.
constexpr size_t kStreamGetBytes = 256 * 1024;

// Moves request r between its local buffer and `mapped` (the peer's bytes, mapped here) chunk
// by chunk, feeding each chunk to `state` (when not null) while it is in L1:
//  - a write hashes the local chunk, then copies it out, streamed when r.bypass_cache;
//  - a read copies the chunk in, then hashes the peer's chunk (its lines are in L1 after the
//    copy read them, while the destination may have been streamed past the cache). Hashing the
//    source after the copy still catches any change to it during the read: a store the copy saw
//    precedes the hash's load in coherence order, so the hash sees it too, and the sum differs.
void CopyMapped(const transport::TransferRequest& r, std::byte* mapped, XXH3_state_t* state) {
  auto* local = static_cast<std::byte*>(r.local);
  const bool is_read = r.op == transport::OpKind::kRead;
  const bool stream = is_read ? r.length >= kStreamGetBytes : r.bypass_cache;
  for (size_t off = 0; off < r.length; off += kMappedChunk) {
    const size_t len = std::min(kMappedChunk, r.length - off);
    std::byte* dst = is_read ? local + off : mapped + off;
    const std::byte* src = is_read ? mapped + off : local + off;
    if (state && !is_read) XXH3_64bits_update_dispatch(state, src, len);
    if (stream) {
      StreamingCopy(dst, src, len);
    } else {
      std::memcpy(dst, src, len);
    }
    if (state && is_read) XXH3_64bits_update_dispatch(state, src, len);
  }
}

// Moves every request of [first, last) whose peer bytes are mapped here with the CPU (hashed
// into (*sums)[j] when wanted(j)); returns the others, which need the transport.
template <typename Wanted>
std::vector<size_t> CopyWhereMapped(transport::Transport& transport,
                                    const std::vector<transport::TransferRequest>& reqs,
                                    size_t first, size_t last, const Wanted& wanted,
                                    std::vector<uint64_t>* sums) {
  std::vector<size_t> remote;
  for (size_t j = first; j < last; ++j) {
    std::byte* mapped =
        reqs[j].length == 0
            ? nullptr
            : transport.MappedAddress(reqs[j].peer, reqs[j].remote_addr, reqs[j].length);
    if (mapped == nullptr) {
      remote.push_back(j);
      continue;
    }
    if (!wanted(j)) {
      CopyMapped(reqs[j], mapped, nullptr);
      continue;
    }
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    CopyMapped(reqs[j], mapped, &state);
    (*sums)[j] = XXH3_64bits_digest(&state);
  }
  return remote;
}

// The requests `remote` in groups of about kHashPiece bytes when hashing, else one group.
std::vector<std::vector<size_t>> GroupByHashPiece(
    const std::vector<transport::TransferRequest>& reqs, const std::vector<size_t>& remote,
    bool hashing) {
  std::vector<std::vector<size_t>> groups;
  size_t group_bytes = 0;
  for (size_t j : remote) {
    if (groups.empty() || (hashing && group_bytes >= kHashPiece)) {
      groups.emplace_back();
      group_bytes = 0;
    }
    groups.back().push_back(j);
    group_bytes += reqs[j].length;
  }
  return groups;
}

}  // namespace

void StoreClient::MoveGroup(const std::vector<transport::TransferRequest>& reqs, size_t first,
                            size_t last, const std::vector<char>* hash, const Deadline& d,
                            std::vector<Status>* out, std::vector<uint64_t>* sums) {
  auto wanted = [&](size_t j) { return sums != nullptr && (hash == nullptr || (*hash)[j]); };
  // Through the mapping where there is one; the rest go through the transport below.
  const std::vector<size_t> remote = CopyWhereMapped(transport_, reqs, first, last, wanted, sums);
  if (remote.empty()) return;
  // Unhashed requests go as one batch. Hashed ones go in groups of about kHashPiece bytes, all
  // groups in flight at once: a group of writes is hashed just before it is posted, while the
  // ones before it are on the wire; a group of reads is hashed as soon as it (and every one
  // before it) has arrived, while the later ones still move. (Waves of 128 KiB, one in flight
  // behind another, left tcp idle during each hash: verified gets ran at 0.43x the raw read. A
  // batch per request cost small objects a Submit and a flush each.)
  const auto groups = GroupByHashPiece(reqs, remote, /*hashing=*/sums != nullptr);
  const bool is_read = reqs[remote[0]].op == transport::OpKind::kRead;
  // Hashes request j's local bytes, driving the transport between kHashPiece pieces: the
  // caller is the one that progresses the transport while it waits (CallerProgressScope), so
  // without this the link idled for the whole hash (tcp 1 MiB gets: 0.6-0.8x the raw read).
  auto hash_request = [&](size_t j) {
    if (!wanted(j)) return;
    XXH3_state_t state;
    XXH3_64bits_reset(&state);
    const auto* local = static_cast<const std::byte*>(reqs[j].local);
    for (size_t off = 0; off < reqs[j].length; off += kHashPiece) {
      XXH3_64bits_update_dispatch(&state, local + off, std::min(kHashPiece, reqs[j].length - off));
      transport_.Progress();
    }
    (*sums)[j] = XXH3_64bits_digest(&state);
  };
  std::vector<std::unique_ptr<transport::TransferBatch>> batches(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<transport::TransferRequest> batch_reqs;
    for (size_t j : groups[g]) {
      if (!is_read) hash_request(j);  // no-op when j is not hashed
      batch_reqs.push_back(reqs[j]);
    }
    auto b = transport_.Submit(batch_reqs);
    if (b.ok()) {
      batches[g] = std::move(*b);
    } else {
      for (size_t j : groups[g]) (*out)[j] = b.status();
    }
  }
  bool timed_out = false;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (batches[g] == nullptr) continue;
    std::vector<Status> per = Finish(*batches[g], d);
    for (size_t k = 0; k < groups[g].size(); ++k) {
      const size_t j = groups[g][k];
      (*out)[j] = per[k];
      timed_out |= per[k].code() == ErrorCode::kTimeout;
      if (is_read && per[k].ok()) hash_request(j);
    }
  }
  if (!timed_out) return;
  // Requests still running at the deadline keep writing into the caller's buffer (reads) or
  // into store space the master may hand out again once the put is revoked (writes). Give them
  // one more timeout to stop before the call returns (its result stays Timeout), so a caller
  // that frees its buffer on a Timeout does not race the transport. A dead peer fails them
  // sooner (tcp, rdma: UCX's peer-failure callbacks).
  const Deadline drain = Start();
  for (auto& b : batches) {
    if (b == nullptr || b->Poll() != transport::BatchState::kInProgress) continue;
    const Nanos left = drain.Remaining(clock_);
    (void)b->Wait(left > Nanos(0) ? left : Nanos(0));
  }
}

std::vector<Status> StoreClient::MoveAndHash(const std::vector<transport::TransferRequest>& reqs,
                                             const std::vector<char>* hash, const Deadline& d,
                                             std::vector<uint64_t>* sums) {
  std::vector<Status> out(reqs.size());
  size_t total = 0;
  for (const auto& r : reqs) total += r.length;
  // Only copies this process does itself (mapped segments) gain from more threads: over a
  // network the bytes move on the transport's threads (tcp puts: 2.1 -> 1.4 GB/s with two).
  const bool mapped =
      !reqs.empty() && reqs[0].length > 0 &&
      transport_.MappedAddress(reqs[0].peer, reqs[0].remote_addr, reqs[0].length) != nullptr;
  const size_t threads = total >= kSplitBytes && mapped
                             ? std::min<size_t>(std::max(1, cfg_.copy_threads), reqs.size())
                             : 1;
  if (threads <= 1) {
    MoveGroup(reqs, 0, reqs.size(), hash, d, &out, sums);
    return out;
  }
  // Contiguous groups of about total/threads bytes; the caller runs the first.
  std::vector<size_t> cuts{0};
  size_t acc = 0;
  for (size_t j = 0; j < reqs.size() && cuts.size() < threads; ++j) {
    acc += reqs[j].length;
    if (acc >= total * cuts.size() / threads && j + 1 < reqs.size()) cuts.push_back(j + 1);
  }
  cuts.push_back(reqs.size());
  std::vector<std::thread> helpers;
  for (size_t g = 1; g + 1 < cuts.size(); ++g) {
    helpers.emplace_back([&, g] { MoveGroup(reqs, cuts[g], cuts[g + 1], hash, d, &out, sums); });
  }
  MoveGroup(reqs, cuts[0], cuts[1], hash, d, &out, sums);
  for (auto& h : helpers) h.join();
  return out;
}

}  // namespace mooncake::store
