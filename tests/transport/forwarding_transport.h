// A Transport that passes every call to another one, for tests that change one or two of its
// behaviours by overriding them (a world that grows, a send that delivers a message first).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "transport/transport.h"

namespace mooncake::transport {

class ForwardingTransport : public Transport {
 public:
  explicit ForwardingTransport(Transport& inner) : inner_(inner) {}
  Rank self() const override { return inner_.self(); }
  int world_size() const override { return inner_.world_size(); }
  std::string backend_name() const override { return inner_.backend_name(); }
  std::vector<std::byte> LocalAddress() const override { return inner_.LocalAddress(); }
  Status ConnectAll(const std::vector<std::vector<std::byte>>& a) override {
    return inner_.ConnectAll(a);
  }
  Result<MemoryRegion> RegisterMemory(void* addr, size_t length, MemoryType type) override {
    return inner_.RegisterMemory(addr, length, type);
  }
  Status UnregisterMemory(const MemoryRegion& r) override { return inner_.UnregisterMemory(r); }
  Result<RemoteDescriptor> Export(const MemoryRegion& r) override { return inner_.Export(r); }
  Status Import(Rank owner, const RemoteDescriptor& d) override { return inner_.Import(owner, d); }
  Result<std::unique_ptr<TransferBatch>> Submit(std::span<const TransferRequest> r) override {
    return inner_.Submit(r);
  }
  void SetMessageHandler(MessageHandler h) override { inner_.SetMessageHandler(std::move(h)); }
  Status SendMessage(Rank peer, std::span<const std::byte> payload) override {
    return inner_.SendMessage(peer, payload);
  }
  bool Progress() override { return inner_.Progress(); }
  std::string DescribePath(Rank peer) const override { return inner_.DescribePath(peer); }
  void BeginShutdown() override { inner_.BeginShutdown(); }
  Status Close(Nanos timeout) override { return inner_.Close(timeout); }

 protected:
  Transport& inner_;
};

}  // namespace mooncake::transport
