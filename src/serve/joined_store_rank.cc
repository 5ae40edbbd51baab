#include "serve/joined_store_rank.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "common/log.h"
#include "common/units.h"
#include "serve/store_service_node.h"
#include "store/net/join_drain_messages.h"
#include "store/net/messages.h"
#include "store/node/client_listener.h"
#include "transport/join_slots.h"

namespace mooncake::serve {

JoinedStoreRank::JoinedStoreRank(std::unique_ptr<transport::Transport> transport)
    : transport_(std::move(transport)), rpc_(std::make_unique<transport::Rpc>(*transport_)) {}

JoinedStoreRank::~JoinedStoreRank() {
  rpc_->Stop();
  transport_->BeginShutdown();
  (void)transport_->Close(std::chrono::seconds(2));
}

Status JoinedStoreRank::Join(const JoinSettings& s, const AttachMaster& attach) {
  rpc_->SetJobToken(s.token);
  master_ = s.master;
  auto region = transport_->AllocateMemory(s.dram, transport::MemoryType::kHost);
  if (!region.ok()) return region.status().WithContext("this store rank's DRAM segment");
  segment_ = *region;
  auto descriptor = transport_->Export(*region);
  if (!descriptor.ok()) return descriptor.status();
  MC_RETURN_IF_ERROR(attach(*transport_, master_));
  auto listener = store::ListenForClients(*transport_, {s.listen, 0}, s.credential);
  if (!listener.ok()) return listener.status();
  store::JoinRequest ask;
  ask.hosts = listener->hosts;
  ask.port = listener->port;
  ask.segment = descriptor->Encode();
  auto bytes = rpc_->Call(master_, static_cast<uint16_t>(store::StoreMsg::kJoin), ask.Encode(),
                          std::chrono::seconds(30));
  if (!bytes.ok()) return bytes.status().WithContext("the master refused the join");
  auto reply = store::JoinReply::Decode(*bytes);
  if (!reply.ok()) return reply.status();
  rank_ = Rank{reply->rank};
  auto slots = transport::JoinSlotsOf(*transport_);
  if (!slots.ok()) return slots.status();
  return (*slots)->TakeJoinSlot(master_, rank_);
}

int JoinedStoreRank::Serve(const JoinSettings& s, const std::string& connect_file,
                           const std::function<bool()>& signalled) {
  ServeConfig config;
  config.membership.heartbeat_interval = s.heartbeat_interval;
  config.membership.failure_timeout = s.failure_timeout;
  config.job_deadline = std::chrono::hours(24 * 365 * 10);  // a service: the stop ends it
  store::StoreTopology own;
  own.segments.push_back({rank_, reinterpret_cast<uint64_t>(segment_.addr), segment_.length});
  StoreServiceNode node(ServePart::kStore,
                        StoreServiceDeps{*transport_,
                                         *rpc_,
                                         rank_,
                                         master_,
                                         own,
                                         {static_cast<std::byte*>(segment_.addr), segment_.length}},
                        config, store::MasterNodeConfig{}, store::StoreRankConfig{});
  node.OnConductorLost([&node, rank = rank_](const Status& why) {
    if (node.leave_requested()) return;
    // The master is gone, or it declared this rank dead (a stall) and fences it now.
    log::Error("joined store rank {} ends: lost the store job's master, or fenced by it ({})",
               rank.value, why.ToString());
    std::fflush(nullptr);
    std::_Exit(4);
  });
  if (Status started = node.Start(); !started.ok()) {
    log::Error("{}", started.ToString());
    return 1;
  }
  std::printf("joined the store job behind %s as store rank %d (%s DRAM)\n", connect_file.c_str(),
              rank_.value, FormatBytes(segment_.length).c_str());
  std::fflush(stdout);
  while (!node.stop_requested() && !node.leave_requested() && !signalled()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (node.leave_requested() && !node.stop_requested()) {
    log::Info("store rank {} drained: leaves the job (exit 0)", rank_.value);
    node.StopHeartbeats();
    return 0;
  }
  if (!node.stop_requested()) {
    log::Warn("store rank {} signalled: leaves without a drain (the job counts it as lost)",
              rank_.value);
    return 1;
  }
  RankReport report = node.Finish();
  Status sent = node.SendReport(report);
  if (!sent.ok()) log::Error("report to the master: {}", sent.ToString());
  node.WaitForShutdown();
  return report.errors == 0 && sent.ok() ? 0 : 1;
}

}  // namespace mooncake::serve
