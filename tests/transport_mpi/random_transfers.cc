// Multi-rank test: random batches of READs and WRITEs of random sizes (1 B to 16 MiB) between
// every pair of ranks, every byte verified against a per-initiator shadow of what the target
// must hold. Prints one summary line on rank 0 (matched by the CTest EXPECT regex).
//
// Layout: every rank exposes one zone of kZone bytes per other rank (transport-allocated
// memory); only that initiator touches it, so its shadow is exact. Local staging memory is heap
// memory registered with RegisterMemory, so both kinds of local memory are exercised.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "cluster/mpi/mpi_session.h"
#include "common/units.h"
#include "common/wire.h"
#include "transfer_bench_setup.h"

namespace mooncake::bench {
namespace {

using transport::OpKind;
using transport::TransferRequest;

constexpr size_t kZone = 17 * kMiB;
constexpr size_t kMaxRequest = 16 * kMiB;
constexpr size_t kStaging = 32 * kMiB;  // bytes in flight per batch at most
constexpr Nanos kDeadline(60'000'000'000);

uint64_t ZoneSeed(int target, int source) { return 7919ull * target + source + 1; }
// Zone of `source` inside `target`'s exposed memory.
size_t ZoneIndex(int target, int source) { return source < target ? source : source - 1; }

struct Counts {
  uint64_t batches = 0, reads = 0, writes = 0, bytes = 0, verified = 0, mismatches = 0, errors = 0;
};

struct Planned {
  TransferRequest request;
  size_t offset;  // in the peer's zone
};

int Run(int argc, char** argv) {
  auto mpi_or = cluster::MpiSession::Init(&argc, &argv);
  if (!mpi_or.ok()) return 1;
  auto& mpi = **mpi_or;
  const int me = mpi.rank(), n = mpi.size();
  const int batches = argc > 1 ? std::atoi(argv[1]) : 16;
  if (n < 2) return 2;
  const size_t exposed = kZone * (n - 1);
  auto conn = ConnectUcx(mpi, transport::UcxConfig{}, {exposed}, /*allocate=*/true);
  if (!conn.ok()) {
    std::fprintf(stderr, "rank %d: %s\n", me, conn.status().ToString().c_str());
    mpi.Abort(1);
  }
  auto& t = *conn->transport;
  auto* zones = static_cast<std::byte*>(conn->local[0].addr);
  Buffer staging = AllocateBuffer(kStaging);
  auto staging_region = t.RegisterMemory(staging.get(), kStaging, transport::MemoryType::kHost);
  std::vector<Buffer> shadow(n);
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    FillPattern(ZoneSeed(me, p), 0, {zones + ZoneIndex(me, p) * kZone, kZone});
    shadow[p] = AllocateBuffer(kZone);
    FillPattern(ZoneSeed(p, me), 0, {shadow[p].get(), kZone});
  }
  Counts c;
  auto fail = [&](const std::string& what) {
    if (c.errors++ < 5) std::fprintf(stderr, "rank %d: %s\n", me, what.c_str());
  };
  if (!staging_region.ok() || !mpi.Barrier(kDeadline).ok()) mpi.Abort(1);

  std::mt19937_64 rng(0xC0FFEEull * (me + 1));
  auto remote_zone = [&](int p) { return conn->remote[p][0].addr + ZoneIndex(p, me) * kZone; };
  for (int b = 0; b < batches; ++b) {
    std::vector<Planned> plan;
    size_t used = 0;
    const int k = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < k && used < kStaging; ++i) {
      int peer = static_cast<int>(rng() % (n - 1));
      if (peer >= me) ++peer;
      // Log-uniform sizes: as many tiny requests as large ones.
      size_t len = static_cast<size_t>(std::exp(std::uniform_real_distribution<double>(
          0, std::log(static_cast<double>(kMaxRequest)))(rng)));
      len = std::clamp<size_t>(len, 1, std::min(kMaxRequest, kStaging - used));
      size_t off = rng() % (kZone - len + 1);
      bool overlaps = false;
      for (const auto& q : plan) {
        overlaps |= q.request.peer.value == peer && off < q.offset + q.request.length &&
                    q.offset < off + len;
      }
      if (overlaps) continue;  // two requests of one batch never touch the same bytes
      OpKind op = rng() % 2 ? OpKind::kWrite : OpKind::kRead;
      std::byte* local = staging.get() + used;
      if (op == OpKind::kWrite) {
        FillPattern(rng(), 0, {local, len});
      } else {
        std::memset(local, 0xA5, len);
      }
      plan.push_back({TransferRequest{op, local, Rank{peer}, remote_zone(peer) + off, len}, off});
      used += (len + 63) / 64 * 64;
    }
    std::vector<TransferRequest> requests;
    for (const auto& q : plan) requests.push_back(q.request);
    auto batch = t.Submit(requests);
    Status s = batch.ok() ? (*batch)->Wait(kDeadline) : batch.status();
    ++c.batches;
    if (!s.ok()) {
      fail("batch " + std::to_string(b) + ": " + s.ToString());
      continue;
    }
    for (const auto& q : plan) {
      const auto& r = q.request;
      std::byte* expect = shadow[r.peer.value].get() + q.offset;
      c.bytes += r.length;
      if (r.op == OpKind::kWrite) {
        std::memcpy(expect, r.local, r.length);  // verified by later reads and the final sweep
        ++c.writes;
      } else {
        ++c.reads;
        c.verified += r.length;
        if (std::memcmp(expect, r.local, r.length) != 0) ++c.mismatches;
      }
    }
  }
  // Final sweep: read back every zone this rank owns at every peer and compare with the shadow.
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    for (size_t off = 0; off < kZone; off += kMaxRequest) {
      size_t len = std::min(kMaxRequest, kZone - off);
      std::memset(staging.get(), 0, len);
      TransferRequest r{OpKind::kRead, staging.get(), Rank{p}, remote_zone(p) + off, len};
      auto batch = t.Submit({&r, 1});
      Status s = batch.ok() ? (*batch)->Wait(kDeadline) : batch.status();
      if (!s.ok()) {
        fail("final read from rank " + std::to_string(p) + ": " + s.ToString());
        continue;
      }
      c.verified += len;
      if (std::memcmp(shadow[p].get() + off, staging.get(), len) != 0) ++c.mismatches;
    }
  }
  WireWriter w;
  for (uint64_t v : {c.batches, c.reads, c.writes, c.bytes, c.verified, c.mismatches, c.errors}) {
    w.Put(v);
  }
  auto all = mpi.Gather(w.Take(), 0);
  Status down = Shutdown(mpi, *conn, kDeadline);
  if (me == 0) {
    Counts sum;
    for (const auto& rec : all) {
      WireReader in(rec);
      uint64_t v[7] = {};
      for (auto& x : v) in.Get(&x);
      sum.batches += v[0], sum.reads += v[1], sum.writes += v[2], sum.bytes += v[3];
      sum.verified += v[4], sum.mismatches += v[5], sum.errors += v[6];
    }
    bool ok =
        sum.mismatches == 0 && sum.errors == 0 && down.ok() && sum.reads > 0 && sum.writes > 0;
    std::printf(
        "random_transfers: %d ranks, %lu batches, %lu reads, %lu writes, %s moved, "
        "%s verified, mismatches %lu, errors %lu, path to rank 1: %s\nresult %s\n",
        n, (unsigned long)sum.batches, (unsigned long)sum.reads, (unsigned long)sum.writes,
        FormatBytes(sum.bytes).c_str(), FormatBytes(sum.verified).c_str(),
        (unsigned long)sum.mismatches, (unsigned long)sum.errors, t.DescribePath(Rank{1}).c_str(),
        ok ? "OK" : "FAILED");
    return ok ? 0 : 1;
  }
  return 0;
}

}  // namespace
}  // namespace mooncake::bench

int main(int argc, char** argv) { return mooncake::bench::Run(argc, argv); }
