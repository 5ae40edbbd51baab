// Wire messages of the store RPC (client <-> metadata master). Every request is a batch; the
// single-key forms are batches of one. Each message lists its fields once (common/wire_fields.h,
// little-endian, fixed width). Decode never reads past its input and rejects truncated input,
// oversized counts or lengths, unknown enum values and trailing bytes, with ProtocolError
// naming the message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/message_ids.h"
#include "common/status.h"
#include "common/wire_fields.h"
#include "store/types.h"

namespace mooncake::store {

// The message ids (StoreMsg) are in common/message_ids.h, with the requests and answers each
// carries.

inline constexpr uint32_t kMaxBatchKeys = 4096;
inline constexpr uint32_t kMaxReplicas = 64;
inline constexpr uint32_t kMaxMessageBytes = 4096;  // error text

// Every message lists its fields once (Fields, common/wire_fields.h): Encode and Decode below
// walk that list; Validate holds the limits and the agreements between fields.
struct PutStartRequest {
  ReplicateConfig config;  // one config for the whole batch
  std::vector<std::string> keys;
  std::vector<uint64_t> sizes;  // same length as keys
  MC_WIRE_MESSAGE(PutStartRequest, config, keys, sizes)
  Status Validate() const;
};
struct PutEndRequest {
  std::vector<std::string> keys;
  std::vector<uint64_t> checksums;  // same length as keys
  MC_WIRE_MESSAGE(PutEndRequest, keys, checksums)
  Status Validate() const;
};
// PutRevoke, Get, Exists and Remove carry only keys.
struct KeysRequest {
  std::vector<std::string> keys;
  MC_WIRE_MESSAGE(KeysRequest, keys)
  Status Validate() const;
};

// Store ranks a client found failing before the master declared them dead (MarkSuspect).
struct SuspectRanksRequest {
  std::vector<Rank> ranks;
  MC_WIRE_MESSAGE(SuspectRanksRequest, ranks)
  Status Validate() const;
};

// One status per key (PutEnd, PutRevoke, Remove).
struct StatusEntry {
  ErrorCode code = ErrorCode::kOk;
  std::string message;
  MC_WIRE_FIELDS(code, message)
  Status Validate() const;
};
struct StatusResponse {
  std::vector<StatusEntry> entries;
  MC_WIRE_MESSAGE(StatusResponse, entries)
  Status Validate() const;
};
struct PutStartEntry {
  StatusEntry status;
  std::vector<ReplicaLocation> replicas;  // empty unless status is OK
  MC_WIRE_FIELDS(status, replicas)
};
struct PutStartResponse {
  std::vector<PutStartEntry> entries;
  MC_WIRE_MESSAGE(PutStartResponse, entries)
  Status Validate() const;
};
struct GetEntry {
  StatusEntry status;
  ObjectView view;  // meaningful when status is OK
  MC_WIRE_FIELDS(status, view)
};
struct GetResponse {
  std::vector<GetEntry> entries;
  MC_WIRE_MESSAGE(GetResponse, entries)
  Status Validate() const;
};
struct ExistsResponse {
  std::vector<uint8_t> exists;  // 1 per visible key
  MC_WIRE_MESSAGE(ExistsResponse, exists)
  Status Validate() const;
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
  MC_WIRE_MESSAGE(StatsResponse, objects, in_flight_puts, evicted_replicas, revoked_puts,
                  timed_out_puts, requests, exists_keys, exists_ns, get_keys, get_ns)
};

// Encode / Decode of every store message (and of the SSD ones, ssd_messages.h).
template <typename M>
requires wire_fields::HasFields<M> std::vector<std::byte> Encode(const M& m) {
  return WireEncode(m);
}
template <typename M>
requires wire_fields::HasFields<M> Status Decode(std::span<const std::byte> in, M* out) {
  auto decoded = WireDecode<M>(in, M::kWireName);
  if (!decoded.ok()) return decoded.status();
  *out = std::move(*decoded);
  return Status::Ok();
}
// Decode into `*out` in place, reusing its vectors' and strings' capacity (WireDecodeInto);
// `*out` is unusable after a failure.
template <typename M>
requires wire_fields::HasFields<M> Status DecodeInto(std::span<const std::byte> in, M* out) {
  return WireDecodeInto(in, M::kWireName, out);
}

// Requests written straight from the caller's keys, without copying them into a message first
// (the client holds them in the caller's span already): each gives exactly the bytes of Encode
// of the message (messages_test).
// KeysRequest{keys}:
std::vector<std::byte> EncodeKeys(std::span<const std::string> keys);
// PutStartRequest{config, keys, sizes}:
std::vector<std::byte> EncodePutStart(const ReplicateConfig& config,
                                      std::span<const std::string> keys,
                                      std::span<const uint64_t> sizes);
// PutEndRequest{the keys pointed at, checksums}:
std::vector<std::byte> EncodePutEnd(std::span<const std::string* const> keys,
                                    std::span<const uint64_t> checksums);

// Shared limits: a batch of at most kMaxBatchKeys keys of at most kMaxKeyBytes bytes, at most
// kMaxReplicas valid replica locations.
Status CheckKeys(const char* message, const std::vector<std::string>& keys);
Status CheckLocations(const char* message, const std::vector<ReplicaLocation>& replicas);

// Conversions between a Status and its wire form.
StatusEntry ToEntry(const Status& s);
Status FromEntry(const StatusEntry& e);

}  // namespace mooncake::store
