// A store brought up over a bootstrap and a transport: MPI + UCX in store_bench and the
// multi-rank store tests (tests/store_mpi), threads of one process over the loopback transport in
// tests/store/store_bootstrap_test.cc. Rank 0 serves the metadata master, ranks 1..stores register
// a DRAM segment of `store_dram` bytes each, the remaining ranks are clients with a registered
// buffer of `client_buffer` bytes and a StoreClient.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "cluster/bootstrap.h"
#include "common/clock.h"
#include "store/net/client.h"
#include "store/net/journal_sender.h"
#include "store/net/master_service.h"
#include "store/node/standby_node.h"
#include "transport/host_buffer.h"
#include "transport/rpc.h"
#include "transport/transport.h"
#include "transport/ucx/ucx_config.h"

namespace mooncake::bench {

enum class StoreRole { kMaster, kStore, kClient };

struct StoreClusterOptions {
  int stores = 1;
  size_t store_dram = size_t{1} << 30;
  size_t client_buffer = size_t{256} << 20;
  transport::UcxConfig ucx;
  Nanos master_idle_spin = std::chrono::milliseconds(2);  // rank 0's UcxConfig::idle_spin
  store::MasterServiceConfig service;
  store::StoreClientConfig client;
  Nanos phase_timeout = std::chrono::seconds(120);
  // Rank 1 also hosts a standby (store::StandbyNode) that rank 0's master journals to
  // (store::JournalSender): what a standby conductor costs the hot path.
  bool standby = false;
  // Makes this rank's transport; empty: UCX with `ucx` (the benchmark's and the mpi tests'). A
  // one-process test hands each rank its loopback transport.
  std::function<Result<std::unique_ptr<transport::Transport>>(int rank, int size)> make_transport;
};

struct StoreCluster {
  StoreRole role = StoreRole::kClient;
  int client_index = -1;  // 0..clients-1 on client ranks
  int clients = 0;
  std::unique_ptr<transport::Transport> transport;
  std::unique_ptr<transport::Rpc> rpc;
  transport::MemoryRegion region;  // store: the segment; client: the buffer; master: none
  transport::HostBuffer memory;    // region's memory
  store::StoreTopology topology;
  SteadyClock clock;
  std::unique_ptr<store::MasterService> service;  // rank 0
  std::unique_ptr<store::StoreClient> client;     // client ranks
  std::unique_ptr<store::StandbyNode> standby;    // rank 1 with StoreClusterOptions::standby
  std::unique_ptr<store::JournalSender> journal;  // rank 0 with it

  std::span<std::byte> buffer() const {
    return {static_cast<std::byte*>(region.addr), region.length};
  }
};

// Collective. Needs at least stores + 2 ranks. Segments come from Transport::AllocateMemory
// (shared memory a same-host peer maps) when the backend offers it, else registered heap.
Result<std::unique_ptr<StoreCluster>> StartStoreCluster(const cluster::Bootstrap& mpi,
                                                        const StoreClusterOptions& o);
// Collective orderly stop: barrier, BeginShutdown, barrier, stop the Rpc, Close.
Status StopStoreCluster(const cluster::Bootstrap& mpi, StoreCluster& c, Nanos timeout);

}  // namespace mooncake::bench
