// Value types shared by the store's master, its wire messages, its client and its tiers.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/wire_fields.h"

namespace mooncake::store {

// The one key limit of the whole store: a key is a byte string (NUL and non-UTF-8 bytes allowed)
// of 1..kMaxKeyBytes bytes. The master refuses other puts, the client checks before sending,
// and the SSD tier stores keys length-prefixed, so every key a put accepts can also be spilled
// and recovered.
inline constexpr uint32_t kMaxKeyBytes = 4096;

// "" when `key` may be stored; otherwise why not, naming the limit.
inline std::string KeyProblem(const std::string& key) {
  if (key.empty())
    return "the empty key is not allowed (keys are 1.." + std::to_string(kMaxKeyBytes) + " bytes)";
  if (key.size() > kMaxKeyBytes) {
    return "key of " + std::to_string(key.size()) + " bytes is longer than the limit of " +
           std::to_string(kMaxKeyBytes) + " bytes";
  }
  return "";
}

// "" when every key of a batch is one a put may store; otherwise the first that is not, by its
// place in the batch, naming the limit. For reads, exists and removes: a key no put can store
// is refused there too (InvalidArgument), not reported absent, so every call of the client
// treats the empty and an over-long key alike (a put checks each key with KeyProblem).
inline std::string KeysProblem(std::span<const std::string> keys) {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (std::string why = KeyProblem(keys[i]); !why.empty()) {
      return "key " + std::to_string(i) + ": " + why;
    }
  }
  return "";
}

enum class Tier : uint8_t { kDram = 0, kSsd = 1 };

// Where one replica of an object lives. For kDram, `offset` is bytes from the base of the store
// rank's registered segment; for kSsd it names the block inside that rank's HDF5 tier (opaque to
// everyone but the tier).
struct ReplicaLocation {
  Rank rank;
  Tier tier = Tier::kDram;
  uint64_t offset = 0;
  uint64_t length = 0;  // bytes of the object (not the rounded-up reservation)
  MC_WIRE_FIELDS(rank, tier, offset, length)
  friend bool operator==(const ReplicaLocation&, const ReplicaLocation&) = default;
};

// How a put is replicated and protected (Mooncake Store's ReplicateConfig).
struct ReplicateConfig {
  uint32_t replicas = 1;                   // placed on distinct store ranks
  bool soft_pin = false;                   // evicted only after every unpinned object
  bool hard_pin = false;                   // never evicted (Remove still works)
  std::vector<Rank> preferred_ranks = {};  // tried first, in order
  MC_WIRE_FIELDS(replicas, soft_pin, hard_pin, preferred_ranks)
};

// The answer to a Get: where to read and what the bytes must hash to. `lease` is the duration
// granted from the moment the master answered; the client measures it on its own clock from
// when it sent the request (conservative), because the master's clock is not the client's.
//
// `version` names this incarnation of the key (MetadataMaster: unique per key over the job's
// life and across --store.recover restarts); an SSD read names (key, version), so a store rank
// never serves another incarnation's block.
struct ObjectView {
  uint64_t size = 0;
  uint64_t checksum = 0;
  uint64_t version = 0;
  std::vector<ReplicaLocation> replicas;
  Nanos lease{0};
  MC_WIRE_FIELDS(size, checksum, version, lease, replicas)
};

}  // namespace mooncake::store
