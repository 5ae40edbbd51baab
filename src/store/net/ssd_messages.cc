#include "store/net/ssd_messages.h"

namespace mooncake::store {
namespace {

Status Bad(const char* message, const std::string& what) {
  return ProtocolError(std::string("malformed ") + message + ": " + what);
}

// At most `max` entries, each with a key of at most kMaxKeyBytes.
template <typename Entry>
Status CheckKeyed(const char* message, const std::vector<Entry>& entries, size_t max) {
  if (entries.size() > max) return Bad(message, "too many entries");
  for (const Entry& e : entries) {
    if (e.key.size() > kMaxKeyBytes) return Bad(message, "a key is longer than the limit");
  }
  return Status::Ok();
}

}  // namespace

Status SpillRequest::Validate() const { return CheckKeyed(kWireName, entries, kMaxBatchKeys); }

Status SpillResponse::Validate() const {
  if (entries.size() > kMaxBatchKeys) return Bad(kWireName, "too many entries");
  for (const auto& e : entries) MC_RETURN_IF_ERROR(e.status.Validate());
  return Status::Ok();
}

Status PromoteRequest::Validate() const { return CheckKeyed(kWireName, entries, kMaxBatchKeys); }

Status SsdReadResponse::Validate() const {
  if (entries.size() > kMaxBatchKeys) return Bad(kWireName, "too many entries");
  uint64_t total = 0;
  for (const auto& e : entries) {
    MC_RETURN_IF_ERROR(e.status.Validate());
    total += e.bytes.size();
  }
  if (total > kMaxSsdReadBytes) return Bad(kWireName, "more bytes than one read may carry");
  return Status::Ok();
}

Status SsdStageRequest::Validate() const {
  if (keys.size() > kMaxBatchKeys) return Bad(kWireName, "too many keys");
  if (versions.size() != keys.size()) return Bad(kWireName, "not one version per key");
  for (const auto& k : keys) {
    if (k.size() > kMaxKeyBytes) return Bad(kWireName, "a key is longer than the limit");
  }
  if (client_verifies > 1) return Bad(kWireName, "client_verifies is not 0 or 1");
  return Status::Ok();
}

Status SsdStageResponse::Validate() const {
  if (entries.size() > kMaxBatchKeys) return Bad(kWireName, "too many entries");
  if (staging.size() > kMaxStagingDescriptorBytes) return Bad(kWireName, "staging descriptor");
  if (lease < Nanos(0)) return Bad(kWireName, "negative lease");
  for (const auto& e : entries) {
    MC_RETURN_IF_ERROR(e.status.Validate());
    if (e.remote_addr + e.length < e.remote_addr) return Bad(kWireName, "range overflows");
  }
  return Status::Ok();
}

Status SsdDropNotice::Validate() const {
  return CheckKeyed(kWireName, blocks, kMaxRecoveredBlocks);
}

Status RecoveredBlocks::Validate() const {
  return CheckKeyed(kWireName, blocks, kMaxRecoveredBlocks);
}

Status SsdTombstoneRequest::Validate() const {
  return CheckKeyed(kWireName, entries, kMaxBatchKeys);
}

}  // namespace mooncake::store
