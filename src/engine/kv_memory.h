// Memory that holds KV: what an engine computes into and reads from, and what the transport
// moves. Allocated through the Engine (Engine::AllocateKv) because where KV lives is the
// engine's choice: host memory for the cost model and a CPU engine, device memory for a CUDA
// engine (src/gpu), which the transport then registers as such.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mooncake::engine {

enum class KvMemoryKind : uint8_t { kHost, kDevice };

class KvMemory {
 public:
  virtual ~KvMemory() = default;
  // The memory's address range, valid for the object's lifetime. Dereferenceable on the host
  // only when kind() is kHost; device memory is only an address for its engine and transport.
  virtual std::span<std::byte> bytes() = 0;
  virtual KvMemoryKind kind() const = 0;
};

// Zero-filled host memory (as the std::vector staging it replaces).
class HostKvMemory final : public KvMemory {
 public:
  explicit HostKvMemory(uint64_t size) : data_(size) {}
  std::span<std::byte> bytes() override { return data_; }
  KvMemoryKind kind() const override { return KvMemoryKind::kHost; }

 private:
  std::vector<std::byte> data_;
};

}  // namespace mooncake::engine
