#include "transfer_bench_setup.h"

#include <cstdlib>
#include <cstring>

#include "cluster/peer_exchange.h"
#include "transport/factory/transport_factory.h"

namespace mooncake::bench {
namespace {

inline uint64_t Mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t Word(uint64_t seed, uint64_t index) {
  return Mix(seed * 0xD6E8FEB86659FD93ull ^ index);
}

}  // namespace

void FillPattern(uint64_t seed, uint64_t offset, std::span<std::byte> out) {
  size_t i = 0;
  // Unaligned head, then whole words, then the tail.
  while (i < out.size() && (offset + i) % 8 != 0) {
    uint64_t w = Word(seed, (offset + i) / 8);
    out[i] = static_cast<std::byte>(w >> (8 * ((offset + i) % 8)));
    ++i;
  }
  for (; i + 8 <= out.size(); i += 8) {
    uint64_t w = Word(seed, (offset + i) / 8);
    std::memcpy(out.data() + i, &w, 8);
  }
  for (; i < out.size(); ++i) {
    uint64_t w = Word(seed, (offset + i) / 8);
    out[i] = static_cast<std::byte>(w >> (8 * ((offset + i) % 8)));
  }
}

int64_t FindPatternMismatch(uint64_t seed, uint64_t offset, std::span<const std::byte> data) {
  std::byte chunk[4096];
  for (size_t done = 0; done < data.size();) {
    size_t n = std::min(sizeof chunk, data.size() - done);
    FillPattern(seed, offset + done, std::span<std::byte>(chunk, n));
    if (std::memcmp(chunk, data.data() + done, n) != 0) {
      for (size_t j = 0; j < n; ++j) {
        if (chunk[j] != data[done + j]) return static_cast<int64_t>(done + j);
      }
    }
    done += n;
  }
  return -1;
}

void FreeDeleter::operator()(std::byte* p) const { std::free(p); }

Buffer AllocateBuffer(size_t bytes) {
  size_t rounded = (bytes + 4095) / 4096 * 4096;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(4096, rounded == 0 ? 4096 : rounded));
  return Buffer(p);
}

Result<Connected> ConnectUcx(const cluster::Bootstrap& mpi, const transport::UcxConfig& config,
                             const std::vector<size_t>& sizes, bool allocate,
                             transport::MessageHandler handler) {
  transport::TransportConfig tc;
  tc.backend = transport::Backend::kUcx;
  tc.ucx = config;
  auto t = transport::CreateTransport(tc, Rank{mpi.rank()}, mpi.size());
  if (!t.ok()) return t.status();
  Connected c;
  c.transport = std::move(*t);
  c.transport_memory = allocate;
  if (handler) c.transport->SetMessageHandler(std::move(handler));
  for (size_t size : sizes) {
    Result<transport::MemoryRegion> r = NotSupported("not asked");
    if (allocate) r = c.transport->AllocateMemory(size, transport::MemoryType::kHost);
    if (!r.ok()) {
      c.transport_memory = false;
      c.owned.push_back(AllocateBuffer(size));
      r = c.transport->RegisterMemory(c.owned.back().get(), size, transport::MemoryType::kHost);
    }
    if (!r.ok()) return r.status();
    c.local.push_back(*r);
  }
  auto peers = cluster::ExchangePeers(mpi, *c.transport, nullptr, cluster::Role::kStore, c.local,
                                      cluster::kToolBootstrapTimeout);
  if (!peers.ok()) return peers.status();
  for (auto& p : *peers) c.remote.push_back(std::move(p.regions));
  return c;
}

Status Shutdown(const cluster::Bootstrap& mpi, Connected& c, Nanos timeout) {
  MC_RETURN_IF_ERROR(mpi.Barrier(timeout));
  c.transport->BeginShutdown();
  MC_RETURN_IF_ERROR(mpi.Barrier(timeout));
  return c.transport->Close(timeout);
}

}  // namespace mooncake::bench
