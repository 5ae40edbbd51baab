// StoreClient::MoveInWaves: the data path of gets and puts. Every request's bytes are hashed
// (XXH3-64, the value Checksum64 gives, through libxxhash's runtime-dispatched AVX2/AVX-512
// code) while they are in this core's cache. Two ways:
//  - A store segment mapped into this process (shared memory: Transport::MappedAddress) is
//    copied here, in 16 KiB chunks, each hashed while in L1: a put hashes its chunk, then
//    streams it into the segment; a get copies a chunk (streamed into the caller's buffer from
//    256 KiB up), then hashes the segment's chunk, whose lines the copy just read. Neither
//    destination is read back, so a 1 GiB footprint costs one DRAM read and one DRAM write per
//    line: a verified 1 MiB get runs at about the speed of a plain cached copy (docs/STORE.md).
//  - Otherwise (tcp, rdma) requests go through the transport in waves of kWaveBytes: reads hash
//    a wave after it arrived, writes before it leaves, and the next wave is posted before this
//    thread hashes, so the link works meanwhile.
// Large calls are split over StoreClientConfig::copy_threads threads, each with its own share
// (one core's copy is bound by its own memory bandwidth; docs/STORE.md).
#include <xxh_x86dispatch.h>
#include <xxhash.h>

#include <cstring>
#include <memory>
#include <thread>

#include "common/streaming_copy.h"
#include "store/client.h"

namespace mooncake::store {
namespace {

struct StateFree {
  void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
};

// 128 KiB: get/raw ~0.8 at 1 and 16 MiB against ~0.7 for 512 KiB waves (docs/STORE.md).
constexpr size_t kWaveBytes = 128 * 1024;
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

}  // namespace

void StoreClient::MoveGroup(const std::vector<transport::TransferRequest>& reqs, size_t first,
                            size_t last, const std::vector<char>* hash, const Deadline& d,
                            std::vector<Status>* out, std::vector<uint64_t>* sums) {
  const bool hashing = sums != nullptr;
  const bool is_read = first < last && reqs[first].op == transport::OpKind::kRead;
  const size_t wave_limit = hashing ? kWaveBytes : SIZE_MAX;
  struct Piece {
    size_t request;
    size_t offset;
  };
  std::vector<std::unique_ptr<XXH3_state_t, StateFree>> states(last - first);
  auto wanted = [&](size_t j) { return hashing && (hash == nullptr || (*hash)[j]); };
  for (size_t j = first; j < last; ++j) {
    if (!wanted(j)) continue;
    states[j - first].reset(XXH3_createState());
    XXH3_64bits_reset(states[j - first].get());
  }
  std::vector<char> done(last - first, 0);  // copied here through the mapping
  for (size_t j = first; j < last; ++j) {
    if (reqs[j].length == 0) continue;
    std::byte* mapped = transport_.MappedAddress(reqs[j].peer, reqs[j].remote_addr, reqs[j].length);
    if (mapped == nullptr) continue;
    CopyMapped(reqs[j], mapped, states[j - first].get());
    done[j - first] = 1;
  }
  std::vector<std::vector<Piece>> waves(1);
  std::vector<std::vector<transport::TransferRequest>> wave_reqs(1);
  size_t wave_bytes = 0;
  for (size_t j = first; j < last; ++j) {
    if (done[j - first]) continue;
    for (size_t off = 0; off < reqs[j].length || off == 0; off += wave_limit) {
      if (wave_bytes >= wave_limit) {
        waves.emplace_back();
        wave_reqs.emplace_back();
        wave_bytes = 0;
      }
      const size_t len = std::min(wave_limit, reqs[j].length - off);
      transport::TransferRequest r = reqs[j];
      r.local = static_cast<std::byte*>(r.local) + off;
      r.remote_addr += off;
      r.length = len;
      waves.back().push_back({j, off});
      wave_reqs.back().push_back(r);
      wave_bytes += len;
      if (reqs[j].length == 0) break;
    }
  }
  // Hashes wave w's pieces of requests not failed so far (a failed request's sum is unused).
  auto hash_wave = [&](size_t w) {
    for (size_t k = 0; k < waves[w].size(); ++k) {
      const Piece& p = waves[w][k];
      if (!wanted(p.request) || !(*out)[p.request].ok()) continue;
      XXH3_64bits_update_dispatch(states[p.request - first].get(),
                                  static_cast<std::byte*>(reqs[p.request].local) + p.offset,
                                  wave_reqs[w][k].length);
    }
  };
  auto submit = [&](size_t w) -> std::unique_ptr<transport::TransferBatch> {
    if (!is_read && hashing) hash_wave(w);  // the source, before (or while) it leaves
    auto b = transport_.Submit(wave_reqs[w]);
    if (b.ok()) return std::move(*b);
    for (const auto& p : waves[w]) (*out)[p.request] = b.status();
    return nullptr;
  };
  if (waves[0].empty()) waves.clear();  // everything went through the mapping
  std::unique_ptr<transport::TransferBatch> current = waves.empty() ? nullptr : submit(0);
  for (size_t w = 0; w < waves.size(); ++w) {
    const bool copied_inline =
        current == nullptr || current->Poll() != transport::BatchState::kInProgress;
    const bool has_next = w + 1 < waves.size();
    std::unique_ptr<transport::TransferBatch> next;
    if (has_next && !copied_inline) next = submit(w + 1);
    if (current) {
      std::vector<Status> per = Finish(*current, d);
      for (size_t k = 0; k < per.size(); ++k) {
        const Piece& p = waves[w][k];
        if (!per[k].ok() && (*out)[p.request].ok()) (*out)[p.request] = per[k];
      }
    }
    if (is_read && hashing) hash_wave(w);
    if (has_next && copied_inline) next = submit(w + 1);
    current = std::move(next);
  }
  for (size_t j = first; j < last; ++j) {
    if (wanted(j)) (*sums)[j] = XXH3_64bits_digest(states[j - first].get());
  }
}

std::vector<Status> StoreClient::MoveInWaves(const std::vector<transport::TransferRequest>& reqs,
                                             const std::vector<char>* hash, const Deadline& d,
                                             std::vector<uint64_t>* sums) {
  std::vector<Status> out(reqs.size());
  size_t total = 0;
  for (const auto& r : reqs) total += r.length;
  const size_t threads =
      total >= kSplitBytes ? std::min<size_t>(std::max(1, cfg_.copy_threads), reqs.size()) : 1;
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
