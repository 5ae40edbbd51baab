// A whole store inside one process for tests: rank 0 serves the MetadataMaster, ranks 1..S are
// store ranks (each registers a DRAM segment), ranks S+1..S+C are clients. Over the loopback
// transport, so one-sided reads and writes are range-checked memcpys.
#pragma once

#include <atomic>
#include <cstdlib>
#include <memory>
#include <vector>

#include "store/net/client.h"
#include "store/net/master_service.h"
#include "transport/loopback/loopback_transport.h"

namespace mooncake::store::testing {

// A manual clock that several threads may read while the test moves it.
class SharedManualClock final : public Clock {
 public:
  Nanos Now() const override { return Nanos(now_.load()); }
  void Advance(Nanos d) { now_ += d.count(); }

 private:
  std::atomic<int64_t> now_{1'000'000'000};
};

struct LoopbackStoreOptions {
  int stores = 3;
  int clients = 2;
  uint64_t segment_bytes = 8 << 20;
  bool mapped = true;  // false: clients move bytes as over a network (see SetLoopbackMapping)
  // The last `late_stores` store ranks join later (Join): the master has no segment of theirs
  // until then (clients know their addresses from the start).
  int late_stores = 0;
  MasterServiceConfig service;
  StoreClientConfig client;
};
inline LoopbackStoreOptions Options(int stores, int clients, uint64_t segment_bytes = 8 << 20) {
  LoopbackStoreOptions o;
  o.stores = stores;
  o.clients = clients;
  o.segment_bytes = segment_bytes;
  return o;
}

class LoopbackStore {
 public:
  explicit LoopbackStore(LoopbackStoreOptions o) : o_(o) {
    o_.service.tick_interval = std::chrono::milliseconds(5);
    transports_ = transport::CreateLoopbackCluster(1 + o.stores + o.clients, &hub_);
    transport::SetLoopbackMapping(*hub_, o.mapped);
    for (auto& t : transports_) rpcs_.push_back(std::make_unique<transport::Rpc>(*t));
    std::vector<std::vector<transport::RemoteDescriptor>> regions(transports_.size());
    std::vector<int> store_ranks;
    for (int s = 1; s <= o.stores; ++s) {
      segments_.emplace_back(static_cast<std::byte*>(std::aligned_alloc(64, o.segment_bytes)));
      auto region = transports_[s]->RegisterMemory(segments_.back().get(), o.segment_bytes,
                                                   transport::MemoryType::kHost);
      regions_.push_back(*region);
      regions[s].push_back(*transports_[s]->Export(*region));
      store_ranks.push_back(s);
    }
    for (auto& t : transports_) {
      for (int s : store_ranks) (void)t->Import(Rank{s}, regions[s][0]);
    }
    topology_ = *StoreTopology::FromRegions(store_ranks, regions);
    service_ = std::make_unique<MasterService>(o_.service, *rpcs_[0], clock_);
    StoreTopology at_start = topology_;
    at_start.segments.resize(topology_.segments.size() - o.late_stores);
    (void)service_->AddSegments(at_start);
    service_->Start();
    for (int c = 0; c < o.clients; ++c) {
      int rank = 1 + o.stores + c;
      clients_.push_back(std::make_unique<StoreClient>(*transports_[rank], *rpcs_[rank], Rank{0},
                                                       topology_, o_.client));
    }
  }
  // Quiesces before members die: the master's inline handlers run on rank 0's delivery thread,
  // which could still be delivering a request (ThreadSanitizer saw ~MasterService race with
  // PutStart after CallsFailAtTheirDeadlineWhenTheMasterIsSilent).
  ~LoopbackStore() {
    service_->Stop();
    for (auto& r : rpcs_) r->Stop();
    for (auto& t : transports_) (void)t->Close(Nanos(0));
  }

  // A late store rank joins: the master takes its segment (the master's side of a join).
  Status Join(Rank store) { return service_->AddSegment(*topology_.Find(store)); }
  StoreClient& client(int i) { return *clients_[i]; }
  MasterService& service() { return *service_; }
  SharedManualClock& clock() { return clock_; }
  transport::LoopbackHub& hub() { return *hub_; }
  transport::Transport& transport(int rank) { return *transports_[rank]; }
  transport::Rpc& rpc(int rank) { return *rpcs_[rank]; }
  const StoreTopology& topology() const { return topology_; }
  int client_rank(int i) const { return 1 + o_.stores + i; }
  // The raw bytes of a store rank's segment (rank 1..S), to check or damage replicas.
  std::byte* segment(Rank store) { return segments_[store.value - 1].get(); }
  const transport::MemoryRegion& region(Rank store) { return regions_[store.value - 1]; }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  LoopbackStoreOptions o_;
  SharedManualClock clock_;
  std::shared_ptr<transport::LoopbackHub> hub_;
  std::vector<std::unique_ptr<transport::Transport>> transports_;
  std::vector<std::unique_ptr<transport::Rpc>> rpcs_;
  std::vector<std::unique_ptr<std::byte, Free>> segments_;
  std::vector<transport::MemoryRegion> regions_;
  StoreTopology topology_;
  std::unique_ptr<MasterService> service_;
  std::vector<std::unique_ptr<StoreClient>> clients_;
};

}  // namespace mooncake::store::testing
