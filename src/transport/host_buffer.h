// Host memory registered with a transport, for a rank's segment or staging region: the
// transport's own memory where it can allocate it (UCX: shared memory that a peer on the same
// host maps, so its reads are one copy of its own), else page-aligned heap registered with it.
// The store's ranks, the SSD stager and the benchmarks each wrote this fallback out before.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <functional>
#include <memory>

#include "common/status.h"
#include "transport/transport.h"

namespace mooncake::transport {

class HostBuffer {
 public:
  // `fault_in(data, bytes)`, when given, runs over the memory before any use: over the `bytes`
  // asked for in the transport's memory, over the page-rounded allocation on the heap (before it
  // is registered). `transport_memory = false` skips the transport's memory.
  static Result<HostBuffer> Create(Transport& transport, size_t bytes, bool transport_memory,
                                   const std::function<void(std::byte*, size_t)>& fault_in = {});

  HostBuffer() = default;
  HostBuffer(HostBuffer&&) = default;
  HostBuffer& operator=(HostBuffer&&) = default;

  std::byte* data() const { return static_cast<std::byte*>(region_.addr); }
  size_t size() const { return region_.length; }
  const MemoryRegion& region() const { return region_; }

 private:
  MemoryRegion region_;
  // The heap fallback's pages, freed when the buffer goes: after the transport closed (the
  // transport frees its own memory when it closes).
  std::unique_ptr<std::byte, void (*)(void*)> heap_{nullptr, std::free};
};

}  // namespace mooncake::transport
