#include "client/attach_addresses.h"

#include "client/connection_file.h"
#include "common/tcp_probe.h"

namespace mooncake::client {

Status AttachAtAnyAddress(transport::Transport& transport, Rank rank,
                          const std::vector<std::string>& addresses,
                          std::span<const std::byte> credential, Nanos timeout,
                          bool* nothing_listens) {
  const std::string who = "rank " + std::to_string(rank.value);
  if (nothing_listens != nullptr) *nothing_listens = false;
  if (addresses.empty()) return InvalidArgument(who + " has no address");
  Status last;
  std::string tried;
  bool all_refused = true;
  for (const std::string& address : addresses) {
    std::string host;
    uint16_t port = 0;
    MC_RETURN_IF_ERROR(SplitHostPort(address, "address of " + who, &host, &port));
    // A refused TCP connection (nothing listens) is told apart from a listener that UCX could
    // not connect to: only the first means the job behind the address has stopped.
    Status probe = ProbeTcpListener(host, port, timeout);
    if (probe.ok()) {
      all_refused = false;
      last = transport.Attach(rank, host, port, credential, timeout);
    } else {
      if (probe.code() != ErrorCode::kPeerFailure) all_refused = false;
      last = probe;
    }
    // A refusal is the job's answer, and a wrong job size will not change at another address.
    if (last.ok() || last.code() == ErrorCode::kPermissionDenied ||
        last.code() == ErrorCode::kInvalidArgument) {
      return last;
    }
    tried += (tried.empty() ? "" : "; ") + last.message();  // each names its address
  }
  if (nothing_listens != nullptr) *nothing_listens = all_refused;
  std::string message = who + " could not be reached at any of its " +
                        std::to_string(addresses.size()) + " address(es): " + tried;
  const std::string devices = transport.NetDevices();
  if (!devices.empty()) {
    message += "; this process's UCX may use only the network devices '" + devices +
               "' (UCX_NET_DEVICES or transport.devices)";
  }
  return Status(last.code(), message);
}

}  // namespace mooncake::client
