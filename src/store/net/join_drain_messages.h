// Joins and drains of store ranks in a running job (issue 33, item 4). All messages are
// bounds-checked on decode (common/wire_fields.h) and validated.
//
// Join (`mooncake store join CONNECT_FILE`): a process attaches to the master like a client,
// registers its DRAM segment and listens for clients, then asks StoreMsg::kJoin with a
// JoinRequest; the master moves it into a join slot (transport/join_slots.h), takes its
// segment and answers the slot's number, which is its rank from then on.
//
// Drain (`mooncake store drain RANK CONNECT_FILE`): the tool asks the master again and again
// (StoreMsg::kDrain) until the answer says the rank has left. The first ask begins the drain
// (MasterNode::BeginDrain), every ask answers what the rank still holds, and the ask that finds
// it empty finishes the drain and tells the rank to exit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/wire_fields.h"

namespace mooncake::store {

inline constexpr uint32_t kMaxJoinHosts = 64;

struct JoinRequest : WireMessage<JoinRequest> {
  std::vector<std::string> hosts;  // IPv4 addresses its client listener is bound to, best first
  uint16_t port = 0;               // its client listener
  std::vector<std::byte> segment;  // its DRAM segment's transport::RemoteDescriptor, encoded
  MC_WIRE_MESSAGE(JoinRequest, hosts, port, segment)
  Status Validate() const;  // a listener address, a segment that decodes and is not empty
};

struct JoinReply : WireMessage<JoinReply> {
  int32_t rank = -1;  // its rank in the job from now on (a join slot)
  MC_WIRE_MESSAGE(JoinReply, rank)
  Status Validate() const;
};

struct DrainRequest : WireMessage<DrainRequest> {
  int32_t rank = -1;  // the store rank to drain
  MC_WIRE_MESSAGE(DrainRequest, rank)
  Status Validate() const;
};

struct DrainReply : WireMessage<DrainReply> {
  int32_t rank = -1;
  uint64_t dram_replicas = 0;  // what it still holds (MetadataMaster::DrainState)
  uint64_t ssd_replicas = 0;
  uint64_t used_bytes = 0;
  uint64_t copied = 0;  // objects the master's copier has moved so far (all drains, all losses)
  bool left = false;    // drained, removed from the master, and told to exit
  MC_WIRE_MESSAGE(DrainReply, rank, dram_replicas, ssd_replicas, used_bytes, copied, left)
  Status Validate() const;
};

}  // namespace mooncake::store
