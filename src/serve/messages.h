// Wire messages of the serving job. Each is a plain struct with Encode() and a bounds-checked
// static Decode() that rejects truncated, oversized and trailing input.
//
// Flow of one request:
//   conductor --PrefillTask--> prefill --KvOffer--> decode (reply: where to write the KV)
//   prefill --(one-sided WRITEs of every block)--> decode's receive buffer
//   prefill --KvDone--> decode;  prefill --PrefillDone--> conductor
//   decode --KvArrived--> conductor (reply: admitted or rejected, after Scheduler::AdmitToDecode)
//   decode --DecodeDone--> conductor
// Times are wall-clock nanoseconds on the conductor's steady clock (ranks convert with their
// clock offset, see clock_sync.h) unless named *_model_s (model seconds).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"

namespace mooncake::serve {

enum ServeMsg : uint16_t {
  kMsgClockSync = 0x0201,    // empty request; reply: the conductor's steady clock (int64 ns)
  kMsgPrefillTask = 0x0202,  // PrefillTask, one-way
  kMsgKvOffer = 0x0203,      // KvOffer; reply: KvOfferReply
  kMsgKvDone = 0x0204,       // KvDone, one-way
  kMsgPrefillDone = 0x0205,  // PrefillDone, one-way
  kMsgKvArrived = 0x0206,    // KvArrived; reply: KvArrivedReply
  kMsgDecodeDone = 0x0207,   // DecodeDone, one-way
  kMsgStop = 0x0208,         // conductor -> every rank: finish; empty request and reply
  kMsgHeartbeat = 0x0209,    // every rank -> conductor; reply: MembershipView (membership.h)
  kMsgMembership = 0x020a,   // conductor -> every rank on a death: MembershipView, one-way
  kMsgReport = 0x020b,       // every rank -> conductor at the end: RankReport; empty reply
  kMsgShutdown = 0x020c,     // conductor -> every rank: the job is over (MembershipView)
};

inline constexpr uint32_t kMaxBlocksPerRequest = 1u << 20;

struct PrefillTask {
  uint64_t request = 0;
  uint32_t attempt = 0;  // 0, or 1 once re-dispatched after a rank died
  int32_t input_length = 0;
  int32_t output_length = 0;
  int32_t decode_rank = -1;
  int32_t local_prefix_blocks = 0;  // held by this instance (read from the store)
  int32_t prefix_blocks = 0;        // reused in total; [local, prefix) are fetched
  int64_t prefix_tokens = 0;
  int64_t t_transfer_ns = 0;  // modelled fetch time (model ns): the fetch is paced to it
  int64_t arrival_wall_ns = 0;
  std::vector<uint64_t> hash_ids;

  std::vector<std::byte> Encode() const;
  static Result<PrefillTask> Decode(std::span<const std::byte> bytes);
};

struct KvOffer {
  uint64_t request = 0;
  uint64_t bytes = 0;  // the whole request's KV (blocks x block bytes)
  std::vector<std::byte> Encode() const;
  static Result<KvOffer> Decode(std::span<const std::byte> bytes);
};
struct KvOfferReply {
  uint64_t remote_addr = 0;  // where in the decode rank's receive buffer to write
  std::vector<std::byte> Encode() const;
  static Result<KvOfferReply> Decode(std::span<const std::byte> bytes);
};

struct KvDone {
  uint64_t request = 0;
  uint32_t attempt = 0;  // 0, or 1 once re-dispatched after a rank died
  int32_t prefill_rank = -1;
  int32_t input_length = 0;
  int32_t output_length = 0;
  int64_t first_token_wall_ns = 0;  // end of the prefill (the first token), conductor clock
  uint64_t remote_addr = 0;         // the slot the offer returned
  std::vector<uint64_t> hash_ids;   // block i is at remote_addr + i * block bytes
  std::vector<std::byte> Encode() const;
  static Result<KvDone> Decode(std::span<const std::byte> bytes);
};

struct PrefillDone {
  uint64_t request = 0;
  uint32_t attempt = 0;  // 0, or 1 once re-dispatched after a rank died
  int32_t prefill_rank = -1;
  int32_t blocks_loaded = 0;   // prefix blocks read from the store and verified
  int32_t blocks_missing = 0;  // prefix blocks the store no longer had (recomputed)
  int32_t blocks_computed = 0;
  int64_t first_token_wall_ns = 0;
  double compute_model_s = 0;  // modelled GPU time of this prefill
  uint64_t bytes_loaded = 0, bytes_stored = 0, bytes_to_decode = 0;
  std::vector<std::byte> Encode() const;
  static Result<PrefillDone> Decode(std::span<const std::byte> bytes);
};

struct KvArrived {
  uint64_t request = 0;
  uint32_t attempt = 0;  // 0, or 1 once re-dispatched after a rank died
  int32_t decode_rank = -1;
  int32_t blocks_verified = 0;
  int32_t blocks_corrupt = 0;
  std::vector<std::byte> Encode() const;
  static Result<KvArrived> Decode(std::span<const std::byte> bytes);
};
struct KvArrivedReply {
  uint8_t admitted = 0;
  std::vector<std::byte> Encode() const;
  static Result<KvArrivedReply> Decode(std::span<const std::byte> bytes);
};

struct DecodeDone {
  uint64_t request = 0;
  uint32_t attempt = 0;  // 0, or 1 once re-dispatched after a rank died
  int32_t decode_rank = -1;
  int32_t tokens = 0;
  double tbt_model_s = 0;
  int64_t done_wall_ns = 0;
  std::vector<std::byte> Encode() const;
  static Result<DecodeDone> Decode(std::span<const std::byte> bytes);
};

}  // namespace mooncake::serve
