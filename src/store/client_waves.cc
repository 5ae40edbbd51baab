// StoreClient::MoveInWaves: the data path of gets and puts. Requests are cut into waves of
// kWaveBytes; each request's bytes are hashed (XXH3-64, the value Checksum64 gives, through
// libxxhash's runtime-dispatched AVX2/AVX-512 code) while they are in this core's cache:
//  - reads hash a wave after it arrived, writes hash it before it leaves;
//  - when the transport copies on the caller's thread (shared memory) the hash and the copy of a
//    wave run back to back; when it moves bytes in the background (tcp, rdma) the next wave is
//    posted before this thread hashes, so the link works meanwhile.
// Large calls are split over StoreClientConfig::copy_threads threads, each with its own waves
// (on shared memory one core's copy is bound by its own memory bandwidth; docs/STORE.md).
#include <xxh_x86dispatch.h>
#include <xxhash.h>

#include <memory>
#include <thread>

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
  std::vector<std::vector<Piece>> waves(1);
  std::vector<std::vector<transport::TransferRequest>> wave_reqs(1);
  size_t wave_bytes = 0;
  for (size_t j = first; j < last; ++j) {
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
  std::vector<std::unique_ptr<XXH3_state_t, StateFree>> states(last - first);
  auto wanted = [&](size_t j) { return hashing && (hash == nullptr || (*hash)[j]); };
  for (size_t j = first; j < last; ++j) {
    if (!wanted(j)) continue;
    states[j - first].reset(XXH3_createState());
    XXH3_64bits_reset(states[j - first].get());
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
  std::unique_ptr<transport::TransferBatch> current = submit(0);
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
