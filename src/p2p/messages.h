// Wire messages between the ranks of a P2P distribution and the tracker (on the conductor rank).
// Each lists its fields once (common/wire_fields.h); Decode is bounds-checked and validated, so
// a malformed or lying message is refused before the tracker or a fetcher uses it.
//
// The exchange (docs/P2P.md "Protocol"):
//   holder:   Register(manifest, its copy)           -> the object exists, the holder has it all
//   receiver: Lookup(name)                           -> the manifest
//             Join(name, its (empty) copy)           -> a holder of no piece yet
//             Update(name, since, landed, started, bad, failed) -> events since `since`
//             Done(report)
//   everyone: Heartbeat every p2p.heartbeat_interval -> finished?, done and dead ranks
//             Leave once finished
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/message_ids.h"
#include "common/status.h"
#include "common/wire_fields.h"
#include "p2p/manifest.h"

namespace mooncake::p2p {

// The message ids (P2pMsg) are in common/message_ids.h.

inline constexpr uint32_t kMaxDescriptors = kMaxEntries + 64;
inline constexpr uint32_t kMaxEventsPerUpdate = 1u << 16;
// Damaged pieces a holder may serve before it is no longer used (by the tracker for every
// reader, and by a reader at once, before the tracker's word reaches it).
inline constexpr uint32_t kMaxBadPieces = 3;

// Where a holder's copy is: the remote address of each entry's first byte (0 for an empty
// entry) and the encoded transport::RemoteDescriptor of every region they lie in.
struct HolderCopy {
  int32_t rank = -1;
  bool complete = false;  // a source: holds every piece from the start
  std::vector<uint64_t> entry_addrs;
  std::vector<std::vector<std::byte>> descriptors;

  MC_WIRE_FIELDS(rank, complete, entry_addrs, descriptors)
  Status Validate() const;
};

struct RegisterRequest {
  static constexpr const char* kWireName = "p2p RegisterRequest";
  Manifest manifest;
  HolderCopy copy;
  MC_WIRE_FIELDS(manifest, copy)
  Status Validate() const;
};

struct NameRequest {
  static constexpr const char* kWireName = "p2p NameRequest";
  std::string name;
  MC_WIRE_FIELDS(name)
  Status Validate() const;
};

struct JoinRequest {
  static constexpr const char* kWireName = "p2p JoinRequest";
  std::string name;
  HolderCopy copy;
  MC_WIRE_FIELDS(name, copy)
  Status Validate() const;
};

// A piece a reader found damaged at a holder.
struct BadPiece {
  int32_t holder = -1;
  uint32_t piece = 0;
  MC_WIRE_FIELDS(holder, piece)
};

struct UpdateRequest {
  static constexpr const char* kWireName = "p2p UpdateRequest";
  std::string name;
  uint64_t since = 0;             // the first event the caller has not seen
  std::vector<uint32_t> landed;   // pieces the caller verified since its last update
  std::vector<uint32_t> started;  // pieces the caller began to read
  std::vector<BadPiece> bad;      // pieces that failed their checksum, by holder
  std::vector<int32_t> failed;    // holders whose reads failed (dead, unreachable)
  MC_WIRE_FIELDS(name, since, landed, started, bad, failed)
  Status Validate() const;
};

enum class EventKind : uint8_t {
  kLanded = 1,   // `rank` now holds `piece`
  kStarted = 2,  // `rank` began to read `piece` (a hint: prefer other pieces from the sources)
  kDropped = 3,  // `rank` no longer serves `piece` (it failed its checksum there)
  kLeft = 4,     // `rank` serves nothing any more (dead, banned or unregistered)
  kJoined = 5,   // `rank` became a holder; its HolderCopy is in the answer's `holders`
};

struct Event {
  EventKind kind = EventKind::kLanded;
  int32_t rank = -1;
  uint32_t piece = 0;
  MC_WIRE_FIELDS(kind, rank, piece)
};

struct UpdateResponse {
  static constexpr const char* kWireName = "p2p UpdateResponse";
  uint64_t next = 0;                // pass as `since` next time
  std::vector<HolderCopy> holders;  // holders that joined in the events returned
  std::vector<Event> events;
  MC_WIRE_FIELDS(next, holders, events)
  Status Validate() const;
};

// What a rank did, for the table rank 0 prints.
enum class RankRole : uint8_t { kSource = 0, kFetch = 1, kShare = 2 };

struct RankReport {
  static constexpr const char* kWireName = "p2p RankReport";
  int32_t rank = -1;
  RankRole role = RankRole::kFetch;
  bool ok = false;
  std::string error;           // why not ok
  uint64_t bytes = 0;          // bytes this rank holds verified at the end
  int64_t fetch_ns = 0;        // wall time of the fetch (0 for sources and sharers)
  int64_t verify_ns = 0;       // wall time of the final verification pass
  uint32_t from_source = 0;    // pieces read from a source
  uint32_t from_peers = 0;     // pieces read from other receivers
  uint32_t present = 0;        // pieces already in place (an earlier run, a takeover)
  uint32_t corrupt = 0;        // pieces that failed their checksum and were read again
  uint32_t read_failures = 0;  // reads that failed (a dead or unreachable holder)
  MC_WIRE_FIELDS(rank, role, ok, error, bytes, fetch_ns, verify_ns, from_source, from_peers,
                 present, corrupt, read_failures)
  Status Validate() const;
};

struct HeartbeatResponse {
  static constexpr const char* kWireName = "p2p HeartbeatResponse";
  bool finished = false;        // every rank is done or dead
  std::vector<int32_t> done;    // ranks whose report is in
  std::vector<int32_t> failed;  // ranks whose report says they failed
  std::vector<int32_t> dead;    // ranks declared dead (silent for p2p.peer_timeout)
  MC_WIRE_FIELDS(finished, done, failed, dead)
};

struct ObjectSummary {
  std::string name;
  uint64_t bytes = 0;
  uint32_t pieces = 0;
  uint32_t holders = 0;           // live holders of at least one piece
  uint32_t complete_holders = 0;  // live holders of every piece
  MC_WIRE_FIELDS(name, bytes, pieces, holders, complete_holders)
};

struct ListResponse {
  static constexpr const char* kWireName = "p2p ListResponse";
  std::vector<ObjectSummary> objects;
  MC_WIRE_FIELDS(objects)
};

using Empty = EmptyMessage;

}  // namespace mooncake::p2p
