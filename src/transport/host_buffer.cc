#include "transport/host_buffer.h"

#include <string>

namespace mooncake::transport {

Result<HostBuffer> HostBuffer::Create(Transport& transport, size_t bytes, bool transport_memory,
                                      const std::function<void(std::byte*, size_t)>& fault_in) {
  HostBuffer b;
  if (transport_memory) {
    auto region = transport.AllocateMemory(bytes, MemoryType::kHost);
    if (region.ok()) {  // else a backend without memory of its own: the heap, registered
      b.region_ = *region;
      if (fault_in) fault_in(b.data(), bytes);
      return b;
    }
  }
  const size_t rounded = (bytes + 4095) / 4096 * 4096;
  b.heap_.reset(static_cast<std::byte*>(std::aligned_alloc(4096, rounded)));
  if (!b.heap_) return NoSpace("cannot allocate " + std::to_string(rounded) + " B");
  if (fault_in) fault_in(b.heap_.get(), rounded);
  auto region = transport.RegisterMemory(b.heap_.get(), bytes, MemoryType::kHost);
  if (!region.ok()) {
    return region.status().WithContext("cannot register " + std::to_string(bytes) + " B");
  }
  b.region_ = *region;
  return b;
}

}  // namespace mooncake::transport
