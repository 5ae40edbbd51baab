#include "client/service_control.h"

#include <thread>

#include "client/attach_addresses.h"
#include "client/connection_file.h"
#include "common/tcp_probe.h"
#include "store/net/messages.h"
#include "transport/factory/transport_factory.h"

namespace mooncake::client {

Status StopStoreService(const std::string& connection_file, Nanos timeout) {
  auto info = ReadConnectionFile(connection_file);
  if (!info.ok()) return info.status();
  auto transport = transport::CreateTransport({}, Rank{-1}, info->world_size);
  if (!transport.ok()) return transport.status();
  Status result;
  {
    transport::Rpc rpc(**transport);
    rpc.SetJobToken(info->token);
    const Rank master{info->master_rank};
    bool nothing_listens = false;
    Status attached = AttachAtAnyAddress(**transport, master, info->master_addresses,
                                         TokenBytes(info->token), timeout, &nothing_listens);
    if (nothing_listens) {
      // What the Python client says too (client.cc): the file outlived its job.
      return PeerFailure("the store job behind " + connection_file +
                         " has stopped (nothing listens at its addresses; the file is stale): " +
                         attached.message());
    }
    if (!attached.ok()) return attached;
    auto reply =
        rpc.Call(master, static_cast<uint16_t>(store::StoreMsg::kServiceStop), {}, timeout);
    result = reply.ok() ? Status::Ok() : reply.status();
    rpc.Stop();
    (*transport)->BeginShutdown();
    (void)(*transport)->Close(std::chrono::seconds(2));
  }
  if (!result.ok()) return result;
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

}  // namespace mooncake::client
