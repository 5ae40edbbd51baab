// Wire messages of the store RPC (client <-> metadata master). Every request is a batch; the
// single-key forms are batches of one. Encoded with common/wire.h (little-endian, fixed width).
// Decode* never reads past its input and rejects truncated input, oversized counts or lengths,
// unknown enum values and trailing bytes, with ProtocolError naming the message and field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "store/types.h"

namespace mooncake::store {

// RPC message type ids (the transport's handler key). Responses reuse the request's id.
enum class StoreMsg : uint16_t {
  kPutStart = 0x0401,
  kPutEnd = 0x0402,
  kPutRevoke = 0x0403,
  kGet = 0x0404,
  kExists = 0x0405,
  kRemove = 0x0406,
  kStats = 0x0407,  // empty request; StatsResponse
};

inline constexpr uint32_t kMaxBatchKeys = 4096;
inline constexpr uint32_t kMaxKeyBytes = 4096;
inline constexpr uint32_t kMaxReplicas = 64;
inline constexpr uint32_t kMaxMessageBytes = 4096;  // error text

struct PutStartRequest {
  ReplicateConfig config;  // one config for the whole batch
  std::vector<std::string> keys;
  std::vector<uint64_t> sizes;  // same length as keys
};
struct PutEndRequest {
  std::vector<std::string> keys;
  std::vector<uint64_t> checksums;  // same length as keys
};
// PutRevoke, Get, Exists and Remove carry only keys.
struct KeysRequest {
  std::vector<std::string> keys;
};

// One status per key (PutEnd, PutRevoke, Remove).
struct StatusEntry {
  ErrorCode code = ErrorCode::kOk;
  std::string message;
};
struct StatusResponse {
  std::vector<StatusEntry> entries;
};
struct PutStartEntry {
  StatusEntry status;
  std::vector<ReplicaLocation> replicas;  // empty unless status is OK
};
struct PutStartResponse {
  std::vector<PutStartEntry> entries;
};
struct GetEntry {
  StatusEntry status;
  ObjectView view;  // meaningful when status is OK
};
struct GetResponse {
  std::vector<GetEntry> entries;
};
struct ExistsResponse {
  std::vector<uint8_t> exists;  // 1 per visible key
};

// The master's counters, for benchmarks and tests (kStats). `*_ns` is time spent inside the
// master under its lock, so keys / ns is the master's own rate without the RPC around it.
struct StatsResponse {
  uint64_t objects = 0;
  uint64_t in_flight_puts = 0;
  uint64_t evicted_replicas = 0;
  uint64_t revoked_puts = 0;
  uint64_t timed_out_puts = 0;
  uint64_t requests = 0;  // RPC requests served (all types)
  uint64_t exists_keys = 0;
  uint64_t exists_ns = 0;
  uint64_t get_keys = 0;
  uint64_t get_ns = 0;
};

std::vector<std::byte> Encode(const StatsResponse& m);
Status Decode(std::span<const std::byte> in, StatsResponse* out);

std::vector<std::byte> Encode(const PutStartRequest& m);
std::vector<std::byte> Encode(const PutEndRequest& m);
std::vector<std::byte> Encode(const KeysRequest& m);
std::vector<std::byte> Encode(const StatusResponse& m);
std::vector<std::byte> Encode(const PutStartResponse& m);
std::vector<std::byte> Encode(const GetResponse& m);
std::vector<std::byte> Encode(const ExistsResponse& m);

Status Decode(std::span<const std::byte> in, PutStartRequest* out);
Status Decode(std::span<const std::byte> in, PutEndRequest* out);
Status Decode(std::span<const std::byte> in, KeysRequest* out);
Status Decode(std::span<const std::byte> in, StatusResponse* out);
Status Decode(std::span<const std::byte> in, PutStartResponse* out);
Status Decode(std::span<const std::byte> in, GetResponse* out);
Status Decode(std::span<const std::byte> in, ExistsResponse* out);

// Conversions between a Status and its wire form.
StatusEntry ToEntry(const Status& s);
Status FromEntry(const StatusEntry& e);

}  // namespace mooncake::store
