#include "store/net/join_drain_messages.h"

#include <string>

#include "transport/transport.h"

namespace mooncake::store {

Status JoinRequest::Validate() const {
  if (hosts.empty() || hosts.size() > kMaxJoinHosts || port == 0) {
    return ProtocolError("malformed JoinRequest: no listener address, or too many");
  }
  auto d = transport::RemoteDescriptor::Decode(segment);
  if (!d.ok()) return d.status().WithContext("the segment of a JoinRequest");
  if (d->length == 0) return ProtocolError("malformed JoinRequest: an empty segment");
  return Status::Ok();
}

Status JoinReply::Validate() const {
  if (rank < 0) return ProtocolError("malformed JoinReply: rank " + std::to_string(rank));
  return Status::Ok();
}

Status DrainRequest::Validate() const {
  if (rank < 0) return ProtocolError("malformed DrainRequest: rank " + std::to_string(rank));
  return Status::Ok();
}

Status DrainReply::Validate() const {
  if (rank < 0) return ProtocolError("malformed DrainReply: rank " + std::to_string(rank));
  if (left && (dram_replicas != 0 || ssd_replicas != 0 || used_bytes != 0)) {
    return ProtocolError("malformed DrainReply: rank " + std::to_string(rank) +
                         " left while still holding data");
  }
  return Status::Ok();
}

}  // namespace mooncake::store
