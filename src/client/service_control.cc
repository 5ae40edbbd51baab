#include "client/service_control.h"

#include <thread>

#include "client/attach_addresses.h"
#include "client/connection_file.h"
#include "common/tcp_probe.h"
#include "store/net/messages.h"
#include "transport/factory/transport_factory.h"

namespace mooncake::client {
namespace {

using MasterCall = std::function<Status(transport::Rpc& rpc, Rank master)>;

// Attaches to the master of the job `info` describes (read from `connection_file`), runs
// `call`, and detaches.
Status WithJobMaster(const ConnectionInfo& info, const std::string& connection_file, Nanos timeout,
                     const MasterCall& call) {
  auto transport = transport::CreateTransport({}, Rank{-1}, info.world_size);
  if (!transport.ok()) return transport.status();
  transport::Rpc rpc(**transport);
  rpc.SetJobToken(info.token);
  const Rank master{info.master_rank};
  bool nothing_listens = false;
  Status attached = AttachAtAnyAddress(**transport, master, info.master_addresses,
                                       TokenBytes(info.token), timeout, &nothing_listens);
  if (nothing_listens) {
    // What the Python client says too (client.cc): the file outlived its job.
    return PeerFailure("the store job behind " + connection_file +
                       " has stopped (nothing listens at its addresses; the file is stale): " +
                       attached.message());
  }
  Status result = attached.ok() ? call(rpc, master) : attached;
  rpc.Stop();
  (*transport)->BeginShutdown();
  (void)(*transport)->Close(std::chrono::seconds(2));
  return result;
}

}  // namespace

Status StopStoreService(const std::string& connection_file, Nanos timeout) {
  auto info = ReadConnectionFile(connection_file);
  if (!info.ok()) return info.status();
  MC_RETURN_IF_ERROR(
      WithJobMaster(*info, connection_file, timeout, [&](transport::Rpc& rpc, Rank master) {
        auto reply = rpc.Call<EmptyMessage, EmptyMessage>(master, store::StoreMsg::kServiceStop, {},
                                                          timeout);
        return reply.ok() ? Status::Ok() : reply.status();
      }));
  // The job has ended when its master's port refuses connections.
  SteadyClock clock;
  const Nanos deadline = clock.Now() + timeout;
  std::string host;
  uint16_t port = 0;
  MC_RETURN_IF_ERROR(SplitHostPort(info->master_addresses.front(), "master address", &host, &port));
  while (clock.Now() < deadline) {
    Status s = ProbeTcpListener(host, port, std::chrono::seconds(1));
    if (s.code() == ErrorCode::kPeerFailure) return Status::Ok();  // nothing listens: ended
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Timeout("the store job accepted the stop but still listens after " +
                 std::to_string(timeout.count() / 1'000'000'000) + " s");
}

Status DrainStoreRank(const std::string& connection_file, int rank, Nanos timeout, Nanos poll,
                      const std::function<void(const store::DrainReply&)>& progress) {
  auto info = ReadConnectionFile(connection_file);
  if (!info.ok()) return info.status();
  store::DrainRequest ask;
  ask.rank = rank;
  return WithJobMaster(*info, connection_file, timeout, [&](transport::Rpc& rpc, Rank master) {
    SteadyClock clock;
    const Nanos deadline = clock.Now() + timeout;
    const Nanos call_timeout = std::min<Nanos>(timeout, std::chrono::seconds(30));
    for (;;) {
      auto reply = rpc.Call<store::DrainRequest, store::DrainReply>(master, store::StoreMsg::kDrain,
                                                                    ask, call_timeout);
      if (!reply.ok()) return reply.status();
      if (progress) progress(*reply);
      if (reply->left) return Status::Ok();
      if (clock.Now() + poll > deadline) {
        return Timeout("store rank " + std::to_string(rank) + " still holds " +
                       std::to_string(reply->dram_replicas) + " replica(s) after " +
                       std::to_string(timeout.count() / 1'000'000'000) + " s of draining");
      }
      std::this_thread::sleep_for(poll);
    }
  });
}

}  // namespace mooncake::client
