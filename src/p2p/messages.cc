#include "p2p/messages.h"

#include <fmt/format.h>

namespace mooncake::p2p {

Status HolderCopy::Validate() const {
  if (rank < 0) return InvalidArgument(fmt::format("holder rank {}", rank));
  if (entry_addrs.size() > kMaxEntries || descriptors.size() > kMaxDescriptors) {
    return InvalidArgument(fmt::format("rank {}: {} entries, {} descriptors", rank,
                                       entry_addrs.size(), descriptors.size()));
  }
  return Status::Ok();
}

Status RegisterRequest::Validate() const {
  MC_RETURN_IF_ERROR(manifest.Validate());
  MC_RETURN_IF_ERROR(copy.Validate());
  if (copy.entry_addrs.size() != manifest.entries.size()) {
    return InvalidArgument(fmt::format("rank {} registers {} entry addresses for {} entries",
                                       copy.rank, copy.entry_addrs.size(),
                                       manifest.entries.size()));
  }
  return Status::Ok();
}

Status NameRequest::Validate() const {
  if (name.empty() || name.size() > kMaxNameBytes) return InvalidArgument("bad object name");
  return Status::Ok();
}

Status JoinRequest::Validate() const {
  if (name.empty() || name.size() > kMaxNameBytes) return InvalidArgument("bad object name");
  return copy.Validate();
}

Status UpdateRequest::Validate() const {
  if (name.empty() || name.size() > kMaxNameBytes) return InvalidArgument("bad object name");
  if (landed.size() > kMaxPieces || started.size() > kMaxPieces || bad.size() > kMaxPieces) {
    return InvalidArgument("update lists more pieces than an object has");
  }
  return Status::Ok();
}

Status UpdateResponse::Validate() const {
  if (events.size() > kMaxEventsPerUpdate) return ProtocolError("update answer too long");
  for (const auto& e : events) {
    if (e.kind < EventKind::kLanded || e.kind > EventKind::kJoined || e.rank < 0) {
      return ProtocolError("update answer holds a malformed event");
    }
  }
  for (const auto& h : holders) MC_RETURN_IF_ERROR(h.Validate());
  return Status::Ok();
}

Status RankReport::Validate() const {
  if (rank < 0 || role > RankRole::kShare) return InvalidArgument("malformed rank report");
  return Status::Ok();
}

}  // namespace mooncake::p2p
