// Wire messages of the SSD tier in the live store: conductor (master) <-> store ranks, and
// client -> store rank for SSD-resident gets. Encoded with common/wire.h; Decode never reads past
// its input and rejects truncated input, oversized counts or keys, unknown codes and trailing
// bytes with ProtocolError.
//
//   kSpill     master -> store rank  SpillRequest      -> SpillResponse (answered once written)
//   kPromote   master -> store rank  PromoteRequest    -> StatusResponse (one per entry)
//   kSsdRead   client -> store rank  KeysRequest       -> SsdReadResponse (the bytes, verified)
//   kSsdDrop   store rank -> master  SsdDropNotice     (one-way: the tier's LRU deleted blocks)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/net/messages.h"

namespace mooncake::store {

enum class SsdMsg : uint16_t {
  kSpill = 0x0410,
  kPromote = 0x0411,
  kSsdRead = 0x0412,
  kSsdDrop = 0x0413,
};

// At most this many bytes of blocks in one SsdReadResponse (below the Rpc's 64 MiB cap).
inline constexpr uint64_t kMaxSsdReadBytes = 32ull << 20;
// Recovery reports can name many more blocks than a request batch.
inline constexpr uint32_t kMaxRecoveredBlocks = 1u << 24;

// "Write the `length` bytes at `offset` of your segment to your SSD tier as `key`."
struct SpillEntry {
  uint64_t ticket = 0;  // the master's eviction ticket, echoed back
  std::string key;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t checksum = 0;
};
struct SpillRequest {
  std::vector<SpillEntry> entries;
};
struct SpillResult {
  StatusEntry status;     // Busy: the tier's queue was full and the block was not written
  uint64_t location = 0;  // the tier's opaque block location when OK
};
struct SpillResponse {
  std::vector<SpillResult> entries;  // same order as the request
};

// "Read `key` from your SSD tier into [offset, offset + length) of your segment."
struct PromoteEntry {
  std::string key;
  uint64_t offset = 0;
  uint64_t length = 0;
};
struct PromoteRequest {
  std::vector<PromoteEntry> entries;
};

struct SsdReadEntry {
  StatusEntry status;
  std::vector<std::byte> bytes;  // the block when OK (checksum verified by the tier)
};
struct SsdReadResponse {
  std::vector<SsdReadEntry> entries;
};

// Blocks an SSD tier holds (its LRU dropped them: kSsdDrop; or recovered them after a restart).
struct SsdBlockRef {
  std::string key;
  uint64_t size = 0;
  uint64_t checksum = 0;
  uint64_t location = 0;
};
struct SsdDropNotice {
  std::vector<SsdBlockRef> blocks;
};
// What a store rank found in its files at start (gathered by the conductor before admitting).
struct RecoveredBlocks {
  uint64_t dropped = 0;  // torn or corrupt entries the scan discarded
  uint32_t files = 0;
  uint32_t unreadable_files = 0;
  std::vector<SsdBlockRef> blocks;
};

std::vector<std::byte> Encode(const SpillRequest& m);
std::vector<std::byte> Encode(const SpillResponse& m);
std::vector<std::byte> Encode(const PromoteRequest& m);
std::vector<std::byte> Encode(const SsdReadResponse& m);
std::vector<std::byte> Encode(const SsdDropNotice& m);
std::vector<std::byte> Encode(const RecoveredBlocks& m);

Status Decode(std::span<const std::byte> in, SpillRequest* out);
Status Decode(std::span<const std::byte> in, SpillResponse* out);
Status Decode(std::span<const std::byte> in, PromoteRequest* out);
Status Decode(std::span<const std::byte> in, SsdReadResponse* out);
Status Decode(std::span<const std::byte> in, SsdDropNotice* out);
Status Decode(std::span<const std::byte> in, RecoveredBlocks* out);

}  // namespace mooncake::store
