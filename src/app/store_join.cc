#include "app/store_join.h"

#include <unistd.h>

#include <boost/program_options.hpp>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>

#include "client/attach_addresses.h"
#include "client/connection_file.h"
#include "cluster/cluster_options.h"
#include "common/cli/option_values.h"
#include "common/log.h"
#include "common/units.h"
#include "serve/store_service_node.h"
#include "store/net/join_drain_messages.h"
#include "store/net/messages.h"
#include "store/node/client_listener.h"
#include "transport/factory/transport_factory.h"
#include "transport/join_slots.h"

namespace mooncake::app {
namespace {

namespace po = boost::program_options;

struct JoinOptions {
  std::string connect_file;
  uint64_t dram = 0;  // 0: the job's store.dram (the connection file's)
  std::string listen = "0.0.0.0";
  std::string tls = "auto";
  cluster::ClusterOptions cluster;
};

volatile std::sig_atomic_t g_join_signal = 0;
extern "C" void OnJoinSignal(int) { g_join_signal = 1; }

po::options_description JoinDescription(std::string* dram, std::string* listen, std::string* tls,
                                        cluster::RawClusterOptions* raw_cluster) {
  po::options_description d("mooncake store join CONNECT_FILE [options]");
  d.add_options()("help,h", "this text")(
      "store.dram", po::value<std::string>(dram)->default_value(""),
      "DRAM this store rank registers (1MiB..1TiB; default: the job's store.dram)")(
      "store.listen", po::value<std::string>(listen)->default_value("0.0.0.0"),
      "IPv4 address it listens on for clients")(
      "transport.tls", po::value<std::string>(tls)->default_value("auto"),
      "UCX transports: auto | shm | tcp | rdma | a UCX_TLS list");
  cluster::AddFailureDetectionOptions(d, raw_cluster);
  return d;
}

// CONNECT_FILE and the options; `*code` is the exit status when parsing ends the command.
bool ParseJoin(int argc, char** argv, JoinOptions* o, int* code) {
  std::string dram, listen, tls;
  cluster::RawClusterOptions raw_cluster;
  po::options_description d = JoinDescription(&dram, &listen, &tls, &raw_cluster);
  po::options_description all;
  all.add(d).add_options()("connect_file", po::value<std::string>(&o->connect_file));
  po::positional_options_description pos;
  pos.add("connect_file", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "mooncake store join: " << e.what() << "\n" << d;
    *code = 2;
    return false;
  }
  if (vm.count("help")) {
    std::cout << "Joins the running store job behind CONNECT_FILE as one more store rank; stops "
                 "with the job (mooncake store stop) or when drained (mooncake store drain).\n"
              << d;
    *code = 0;
    return false;
  }
  Status s = o->connect_file.empty() ? InvalidArgument("missing CONNECT_FILE") : Status::Ok();
  if (s.ok() && !dram.empty()) {
    s = cli::SizeOption("store.dram", dram, 1ull << 20, 1ull << 40, &o->dram);
  }
  if (s.ok()) s = cluster::ConvertClusterOptions(raw_cluster, &o->cluster);
  // A store job's own default (options.cc): a loaded host must not declare its ranks dead.
  if (s.ok() && vm["cluster.failure_timeout"].defaulted()) {
    o->cluster.failure_timeout = std::chrono::seconds(10);
  }
  if (!s.ok()) {
    std::cerr << "mooncake store join: " << s.message() << "\n";
    *code = 2;
    return false;
  }
  o->listen = listen;
  o->tls = tls;
  return true;
}

// What a joining process holds while it serves; destroyed in reverse order.
struct JoinedRank {
  std::unique_ptr<transport::Transport> transport;
  std::unique_ptr<transport::Rpc> rpc;
  transport::MemoryRegion segment;
  Rank rank{-1};
  Rank master{0};
};

// Attaches, registers the segment, listens, and asks the master to join (JoinedRank::rank).
Status Join(const JoinOptions& o, const client::ConnectionInfo& info, JoinedRank* j) {
  transport::TransportConfig tc;
  tc.ucx.tls = o.tls;
  auto t = transport::CreateTransport(tc, Rank{-1}, info.world_size);
  if (!t.ok()) return t.status();
  j->transport = std::move(*t);
  j->rpc = std::make_unique<transport::Rpc>(*j->transport);
  j->rpc->SetJobToken(info.token);
  j->master = Rank{info.master_rank};
  const uint64_t dram = o.dram > 0 ? o.dram : info.dram_per_rank;
  auto region = j->transport->AllocateMemory(dram, transport::MemoryType::kHost);
  if (!region.ok()) return region.status().WithContext("this store rank's DRAM segment");
  j->segment = *region;
  auto descriptor = j->transport->Export(*region);
  if (!descriptor.ok()) return descriptor.status();
  const std::vector<std::byte> token = client::TokenBytes(info.token);
  MC_RETURN_IF_ERROR(client::AttachAtAnyAddress(*j->transport, j->master, info.master_addresses,
                                                token, std::chrono::seconds(10))
                         .WithContext("attaching to the store job's master"));
  auto listener = store::ListenForClients(*j->transport, {o.listen, 0}, token);
  if (!listener.ok()) return listener.status();
  store::JoinRequest ask;
  ask.hosts = listener->hosts;
  ask.port = listener->port;
  ask.segment = descriptor->Encode();
  auto bytes = j->rpc->Call(j->master, static_cast<uint16_t>(store::StoreMsg::kJoin), ask.Encode(),
                            std::chrono::seconds(30));
  if (!bytes.ok()) return bytes.status().WithContext("the master refused the join");
  auto reply = store::JoinReply::Decode(*bytes);
  if (!reply.ok()) return reply.status();
  j->rank = Rank{reply->rank};
  auto slots = transport::JoinSlotsOf(*j->transport);
  if (!slots.ok()) return slots.status();
  return (*slots)->TakeJoinSlot(j->master, j->rank);
}

// Serves until the job stops or drains this rank (or a signal); returns the exit status.
int Serve(const JoinOptions& o, JoinedRank& j) {
  serve::ServeConfig config;
  config.membership.heartbeat_interval = o.cluster.heartbeat_interval;
  config.membership.failure_timeout = o.cluster.failure_timeout;
  config.job_deadline = std::chrono::hours(24 * 365 * 10);  // a service: the stop ends it
  store::StoreTopology own;
  own.segments.push_back({j.rank, reinterpret_cast<uint64_t>(j.segment.addr), j.segment.length});
  serve::StoreServiceNode node(
      serve::ServePart::kStore,
      serve::StoreServiceDeps{*j.transport,
                              *j.rpc,
                              j.rank,
                              j.master,
                              own,
                              {static_cast<std::byte*>(j.segment.addr), j.segment.length}},
      config, store::MasterNodeConfig{}, store::StoreRankConfig{});
  node.OnConductorLost([&node, rank = j.rank](const Status& why) {
    if (node.leave_requested()) return;
    // The master is gone, or it declared this rank dead (a stall) and fences it now.
    log::Error("joined store rank {} ends: lost the store job's master, or fenced by it ({})",
               rank.value, why.ToString());
    std::fflush(nullptr);
    std::_Exit(4);
  });
  if (Status s = node.Start(); !s.ok()) {
    log::Error("{}", s.ToString());
    return 1;
  }
  std::printf("joined the store job behind %s as store rank %d (%s DRAM)\n", o.connect_file.c_str(),
              j.rank.value, FormatBytes(j.segment.length).c_str());
  std::fflush(stdout);
  while (!node.stop_requested() && !node.leave_requested() && !g_join_signal) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (node.leave_requested() && !node.stop_requested()) {
    log::Info("store rank {} drained: leaves the job (exit 0)", j.rank.value);
    node.StopHeartbeats();
    return 0;
  }
  if (!node.stop_requested()) {
    log::Warn("store rank {} signalled: leaves without a drain (the job counts it as lost)",
              j.rank.value);
    return 1;
  }
  serve::RankReport report = node.Finish();
  Status sent = node.SendReport(report);
  if (!sent.ok()) log::Error("report to the master: {}", sent.ToString());
  node.WaitForShutdown();
  return report.errors == 0 && sent.ok() ? 0 : 1;
}

}  // namespace

int RunStoreJoin(int argc, char** argv) {
  JoinOptions o;
  int code = 0;
  if (!ParseJoin(argc, argv, &o, &code)) return code;
  auto info = client::ReadConnectionFile(o.connect_file);
  if (!info.ok()) {
    std::cerr << "mooncake store join: " << info.status().ToString() << "\n";
    return 2;
  }
  struct sigaction sa {};
  sa.sa_handler = OnJoinSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
  JoinedRank j;
  Status s = Join(o, *info, &j);
  if (!s.ok()) {
    std::cerr << "mooncake store join: " << s.ToString() << "\n";
    code = 1;
  } else {
    code = Serve(o, j);
  }
  if (j.rpc) j.rpc->Stop();
  if (j.transport) {
    j.transport->BeginShutdown();
    (void)j.transport->Close(std::chrono::seconds(2));
  }
  return code;
}

}  // namespace mooncake::app
