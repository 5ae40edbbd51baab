#include "app/store_join.h"

#include <boost/program_options.hpp>
#include <iostream>

#include "client/attach_addresses.h"
#include "client/connection_file.h"
#include "cluster/cluster_options.h"
#include "common/cli/option_values.h"
#include "common/stop_signals.h"
#include "serve/joined_store_rank.h"
#include "transport/factory/transport_factory.h"

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
    o->cluster.failure_timeout = cluster::kStoreServiceFailureTimeout;
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

// The joined rank's settings: the job's, from its connection file, and this process's options.
serve::JoinSettings SettingsOf(const JoinOptions& o, const client::ConnectionInfo& info) {
  serve::JoinSettings s;
  s.token = info.token;
  s.credential = client::TokenBytes(info.token);
  s.master = Rank{info.master_rank};
  s.dram = o.dram > 0 ? o.dram : info.dram_per_rank;
  s.listen = o.listen;
  s.heartbeat_interval = o.cluster.heartbeat_interval;
  s.failure_timeout = o.cluster.failure_timeout;
  return s;
}

// Joins and serves; returns the exit status.
int JoinAndServe(const JoinOptions& o, const client::ConnectionInfo& info) {
  transport::TransportConfig tc;
  tc.ucx.tls = o.tls;
  auto t = transport::CreateTransport(tc, Rank{-1}, info.world_size);
  if (!t.ok()) {
    std::cerr << "mooncake store join: " << t.status().ToString() << "\n";
    return 1;
  }
  const serve::JoinSettings settings = SettingsOf(o, info);
  serve::JoinedStoreRank joined(std::move(*t));
  Status s = joined.Join(settings, [&](transport::Transport& transport, Rank master) {
    return client::AttachAtAnyAddress(transport, master, info.master_addresses, settings.credential,
                                      std::chrono::seconds(10))
        .WithContext("attaching to the store job's master");
  });
  if (!s.ok()) {
    std::cerr << "mooncake store join: " << s.ToString() << "\n";
    return 1;
  }
  return joined.Serve(settings, o.connect_file, StopSignalled);
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
  InstallStopSignals();
  return JoinAndServe(o, *info);
}

}  // namespace mooncake::app
