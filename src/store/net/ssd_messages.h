// Wire messages of the SSD tier in the live store: conductor (master) <-> store ranks, and
// client -> store rank for SSD-resident gets. Encoded with common/wire.h; Decode never reads past
// its input and rejects truncated input, oversized counts or keys, unknown codes and trailing
// bytes with ProtocolError.
//
//   kSpill     master -> store rank  SpillRequest      -> SpillResponse (answered once written)
//   kPromote   master -> store rank  PromoteRequest    -> StatusResponse (one per entry)
//   kSsdRead   client -> store rank  SsdStageRequest   -> SsdReadResponse (the bytes, verified)
//   kSsdDrop   store rank -> master  SsdDropNotice     (one-way: the tier's LRU deleted blocks)
//   kSsdStage  client -> store rank  SsdStageRequest   -> SsdStageResponse (where the blocks now
//              are in the store rank's registered staging region, for a one-sided READ)
//   kSsdRelease client -> store rank SsdReleaseNotice  (one-way: the client read them)
//   kSsdTombstone master -> store rank SsdTombstoneRequest -> StatusResponse (answered once
//              every tombstone is durable in the tier's index: a remove waits for it)
// Every message that names a stored object names (key, version): a store rank serves, spills,
// promotes and drops only the version asked for (docs/STORE.md "Versions and tombstones").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "store/net/messages.h"
#include "store/ssd_tier.h"

namespace mooncake::store {

// The message ids (SsdMsg) are in common/message_ids.h.

// At most this many bytes of blocks in one SsdReadResponse (below the Rpc's 64 MiB cap).
inline constexpr uint64_t kMaxSsdReadBytes = 32ull << 20;
// A packed remote key is a few hundred bytes; refuse anything much larger.
inline constexpr uint32_t kMaxStagingDescriptorBytes = 16u << 10;
// Recovery reports can name many more blocks than a request batch.
inline constexpr uint32_t kMaxRecoveredBlocks = 1u << 24;

// "Write the `length` bytes at `offset` of your segment to your SSD tier as `key`."
// Every message lists its fields once (common/wire_fields.h); Encode and Decode are those of
// messages.h, and Validate holds the limits.
struct SpillEntry {
  uint64_t ticket = 0;  // the master's eviction ticket, echoed back
  std::string key;
  uint64_t version = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t checksum = 0;
  MC_WIRE_FIELDS(ticket, key, version, offset, length, checksum)
};
struct SpillRequest {
  std::vector<SpillEntry> entries;
  MC_WIRE_MESSAGE(SpillRequest, entries)
  Status Validate() const;
};

struct SpillResult {
  StatusEntry status;     // Busy: the tier's queue was full and the block was not written
  uint64_t location = 0;  // the tier's opaque block location when OK
  MC_WIRE_FIELDS(status, location)
};
struct SpillResponse {
  std::vector<SpillResult> entries;  // same order as the request
  MC_WIRE_MESSAGE(SpillResponse, entries)
  Status Validate() const;
};

struct PromoteEntry {
  std::string key;
  uint64_t version = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  MC_WIRE_FIELDS(key, version, offset, length)
};
struct PromoteRequest {
  std::vector<PromoteEntry> entries;
  MC_WIRE_MESSAGE(PromoteRequest, entries)
  Status Validate() const;
};

struct SsdReadEntry {
  StatusEntry status;
  std::vector<std::byte> bytes;  // the block when OK (checksum verified by the tier)
  MC_WIRE_FIELDS(status, bytes)
};
struct SsdReadResponse {
  std::vector<SsdReadEntry> entries;
  MC_WIRE_MESSAGE(SsdReadResponse, entries)
  Status Validate() const;
};

struct SsdStageRequest {
  std::vector<std::string> keys;
  std::vector<uint64_t> versions;  // one per key: the version the master named (ObjectView)
  // 1: the client checks every block against the master's checksum (the value the tier
  // stored), so the store rank skips its own check; 0: the store rank checks.
  uint8_t client_verifies = 0;
  MC_WIRE_MESSAGE(SsdStageRequest, keys, versions, client_verifies)
  Status Validate() const;
};

// Where one block of a kSsdStage request was staged: `length` bytes at `remote_addr` of the
// staging region (inside `SsdStageResponse::staging`). Read it one-sided before the lease ends.
struct SsdStagedEntry {
  StatusEntry status;  // OK, NotFound (not on this rank's SSD), Busy (no staging room in time),
                       // Corrupt or IoError (the tier's read failed its checksum or the disk)
  uint64_t remote_addr = 0;
  uint64_t length = 0;
  MC_WIRE_FIELDS(status, remote_addr, length)
};
struct SsdStageResponse {
  uint64_t ticket = 0;             // names the staged blocks in kSsdRelease; 0: nothing staged
  Nanos lease{0};                  // the blocks stay at least this long after the answer was sent
  std::vector<std::byte> staging;  // transport::RemoteDescriptor::Encode() of the region
  std::vector<SsdStagedEntry> entries;  // same order as the request's keys
  MC_WIRE_MESSAGE(SsdStageResponse, ticket, lease, staging, entries)
  Status Validate() const;
};
struct SsdReleaseNotice {
  uint64_t ticket = 0;
  MC_WIRE_MESSAGE(SsdReleaseNotice, ticket)
};

struct SsdDropNotice {
  std::vector<SsdBlock> blocks;
  MC_WIRE_MESSAGE(SsdDropNotice, blocks)
  Status Validate() const;
};

// A store rank's RecoveryReport: its counts and blocks (store/ssd_tier.h).
struct RecoveredBlocks : RecoveryCounts {
  std::vector<SsdBlock> blocks;
  MC_WIRE_MESSAGE(RecoveredBlocks, dropped, dropped_torn, dropped_superseded, dropped_tombstoned,
                  tombstones, max_version, files, unreadable_files, blocks)
  Status Validate() const;
};

// "Persist a tombstone for each (key, version)": recovery then drops that version and older.
struct SsdTombstone {
  std::string key;
  uint64_t version = 0;
  MC_WIRE_FIELDS(key, version)
};
struct SsdTombstoneRequest {
  std::vector<SsdTombstone> entries;
  MC_WIRE_MESSAGE(SsdTombstoneRequest, entries)
  Status Validate() const;
};

}  // namespace mooncake::store
