#include "store/net/messages.h"

namespace mooncake::store {
namespace {

Status Bad(const char* message, const std::string& what) {
  return ProtocolError(std::string("malformed ") + message + ": " + what);
}

template <typename Entry>
Status CheckEntries(const char* message, const std::vector<Entry>& entries) {
  if (entries.size() > kMaxBatchKeys) return Bad(message, "too many entries");
  for (const Entry& e : entries) {
    const StatusEntry* status = nullptr;
    if constexpr (std::is_same_v<Entry, StatusEntry>) {
      status = &e;
    } else {
      status = &e.status;
    }
    MC_RETURN_IF_ERROR(status->Validate());
  }
  return Status::Ok();
}

}  // namespace

namespace {
// A vector<string> field (a count, then each string length-prefixed) from `n` keys, key(i)
// giving the i-th.
template <typename Key>
void PutKeyList(WireWriter& w, size_t n, const Key& key) {
  size_t bytes = sizeof(uint32_t);
  for (size_t i = 0; i < n; ++i) bytes += sizeof(uint32_t) + key(i).size();
  w.Reserve(bytes);
  w.Put<uint32_t>(static_cast<uint32_t>(n));
  for (size_t i = 0; i < n; ++i) w.PutString(key(i));
}
}  // namespace

std::vector<std::byte> EncodeKeys(std::span<const std::string> keys) {
  WireWriter w;
  PutKeyList(w, keys.size(), [&](size_t i) -> const std::string& { return keys[i]; });
  return w.Take();
}

std::vector<std::byte> EncodePutStart(const ReplicateConfig& config,
                                      std::span<const std::string> keys,
                                      std::span<const uint64_t> sizes) {
  WireWriter w;
  wire_fields::Put(w, config);
  PutKeyList(w, keys.size(), [&](size_t i) -> const std::string& { return keys[i]; });
  w.Reserve(sizeof(uint32_t) + sizes.size() * sizeof(uint64_t));
  w.Put<uint32_t>(static_cast<uint32_t>(sizes.size()));
  for (uint64_t s : sizes) w.Put(s);
  return w.Take();
}

std::vector<std::byte> EncodePutEnd(std::span<const std::string* const> keys,
                                    std::span<const uint64_t> checksums) {
  WireWriter w;
  PutKeyList(w, keys.size(), [&](size_t i) -> const std::string& { return *keys[i]; });
  w.Reserve(sizeof(uint32_t) + checksums.size() * sizeof(uint64_t));
  w.Put<uint32_t>(static_cast<uint32_t>(checksums.size()));
  for (uint64_t c : checksums) w.Put(c);
  return w.Take();
}

Status CheckKeys(const char* message, const std::vector<std::string>& keys) {
  if (keys.size() > kMaxBatchKeys) return Bad(message, "too many keys");
  for (const auto& k : keys) {
    if (k.size() > kMaxKeyBytes) return Bad(message, "a key is longer than the limit");
  }
  return Status::Ok();
}

Status CheckLocations(const char* message, const std::vector<ReplicaLocation>& replicas) {
  if (replicas.size() > kMaxReplicas) return Bad(message, "too many replicas");
  for (const auto& r : replicas) {
    if (r.tier != Tier::kDram && r.tier != Tier::kSsd) return Bad(message, "unknown tier");
  }
  return Status::Ok();
}

Status StatusEntry::Validate() const {
  if (ErrorCodeName(code) == "Unknown") return Bad("status", "unknown error code");
  if (message.size() > kMaxMessageBytes) return Bad("status", "message too long");
  return Status::Ok();
}

Status PutStartRequest::Validate() const {
  MC_RETURN_IF_ERROR(CheckKeys(kWireName, keys));
  if (sizes.size() != keys.size()) return Bad(kWireName, "sizes and keys differ in number");
  if (config.replicas > kMaxReplicas || config.preferred_ranks.size() > kMaxReplicas) {
    return Bad(kWireName, "too many replicas");
  }
  return Status::Ok();
}

Status PutEndRequest::Validate() const {
  MC_RETURN_IF_ERROR(CheckKeys(kWireName, keys));
  if (checksums.size() != keys.size()) return Bad(kWireName, "checksums and keys differ");
  return Status::Ok();
}

Status KeysRequest::Validate() const { return CheckKeys(kWireName, keys); }

Status SuspectRanksRequest::Validate() const {
  if (ranks.size() > kMaxBatchKeys) return Bad(kWireName, "too many ranks");
  return Status::Ok();
}

Status StatusResponse::Validate() const { return CheckEntries(kWireName, entries); }

Status PutStartResponse::Validate() const {
  MC_RETURN_IF_ERROR(CheckEntries(kWireName, entries));
  for (const auto& e : entries) MC_RETURN_IF_ERROR(CheckLocations(kWireName, e.replicas));
  return Status::Ok();
}

Status GetResponse::Validate() const {
  MC_RETURN_IF_ERROR(CheckEntries(kWireName, entries));
  for (const auto& e : entries) {
    MC_RETURN_IF_ERROR(CheckLocations(kWireName, e.view.replicas));
    if (e.view.lease < Nanos(0)) return Bad(kWireName, "negative lease");
  }
  return Status::Ok();
}

Status ExistsResponse::Validate() const {
  if (exists.size() > kMaxBatchKeys) return Bad(kWireName, "too many keys");
  for (uint8_t e : exists) {
    if (e > 1) return Bad(kWireName, "an exists flag is neither 0 nor 1");
  }
  return Status::Ok();
}

// A message longer than the wire allows is cut here, where it is made, not refused later.
StatusEntry ToEntry(const Status& s) {
  return StatusEntry{s.code(), s.message().size() <= kMaxMessageBytes
                                   ? s.message()
                                   : s.message().substr(0, kMaxMessageBytes)};
}
Status FromEntry(const StatusEntry& e) {
  return e.code == ErrorCode::kOk ? Status::Ok() : Status(e.code, e.message);
}

}  // namespace mooncake::store
