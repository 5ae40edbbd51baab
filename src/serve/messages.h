// Wire messages of the serving job. Each is a plain struct that lists its fields once (Fields,
// common/wire_fields.h); Encode() and the bounds-checked static Decode() come from that list and
// reject truncated, oversized, trailing and inconsistent input.
//
// Flow of one request:
//   conductor --PrefillTask--> prefill --KvOffer--> decode (reply: where to write the KV)
//   prefill --(one-sided WRITEs of every block, or of each layer of it as it is computed)-->
//     decode's receive buffer
//   prefill --KvDone--> decode;  prefill --PrefillDone--> conductor
//   decode --KvArrived--> conductor (reply: admitted or rejected, after Scheduler::AdmitToDecode)
//   decode --DecodeTokens--> conductor (a streamed request's tokens as they are generated)
//   decode --DecodeDone--> conductor
// Times are wall-clock nanoseconds on the conductor's steady clock (ranks convert with their
// clock offset, see clock_sync.h) unless named *_model_s (model seconds).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cluster/membership.h"
#include "common/message_ids.h"
#include "common/status.h"
#include "common/wire_fields.h"

namespace mooncake::serve {

// The message ids (ServeMsg: kMsgPrefillTask ...) are in common/message_ids.h.

inline constexpr uint32_t kMaxBlocksPerRequest = 1u << 20;
inline constexpr uint32_t kMaxOutputTokens = 1u << 24;

struct PrefillTask : WireMessage<PrefillTask> {
  static constexpr const char* kWireName = "PrefillTask";
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
  // The prompt's tokens when a client gave them (HTTP); empty: from hash_ids (trace_tokens.h).
  std::vector<int32_t> prompt_ids;
  uint8_t stream = 0;  // 1: the client streams; the decode rank sends DecodeTokens as it goes

  template <typename Self, typename Visit>
  static void Fields(Self& m, Visit&& visit) {
    visit(m.request, m.attempt, m.input_length, m.output_length, m.decode_rank,
          m.local_prefix_blocks, m.prefix_blocks, m.prefix_tokens, m.t_transfer_ns,
          m.arrival_wall_ns, m.hash_ids, m.prompt_ids, m.stream);
  }
  Status Validate() const;
};

struct KvOffer : WireMessage<KvOffer> {
  static constexpr const char* kWireName = "KvOffer";
  uint64_t request = 0;
  uint64_t bytes = 0;  // the whole request's KV (blocks x block bytes)
  template <typename Self, typename Visit>
  static void Fields(Self& m, Visit&& visit) {
    visit(m.request, m.bytes);
  }
};
struct KvOfferReply : WireMessage<KvOfferReply> {
  static constexpr const char* kWireName = "KvOfferReply";
  uint64_t remote_addr = 0;  // where in the decode rank's receive buffer to write
  template <typename Self, typename Visit>
  static void Fields(Self& m, Visit&& visit) {
    visit(m.remote_addr);
  }
};

struct KvDone : WireMessage<KvDone> {
  static constexpr const char* kWireName = "KvDone";
  uint64_t request = 0;
  uint32_t attempt = 0;  // 0, or 1 once re-dispatched after a rank died
  int32_t prefill_rank = -1;
  int32_t input_length = 0;
  int32_t output_length = 0;
  int64_t first_token_wall_ns = 0;    // end of the prefill (the first token), conductor clock
  uint64_t remote_addr = 0;           // the slot the offer returned
  int32_t first_token = -1;           // the token the prefill generated (-1: a modelled engine)
  uint8_t stream = 0;                 // PrefillTask::stream, passed on
  int64_t prefill_start_wall_ns = 0;  // when the prefill rank began the request, conductor clock
  std::vector<uint64_t> hash_ids;     // block i is at remote_addr + i * block bytes
  // Checksum64 of each block, taken where its KV was produced or read back verified (the
  // decode rank checks what arrived against it); as many as hash_ids.
  std::vector<uint64_t> checksums;
  template <typename Self, typename Visit>
  static void Fields(Self& m, Visit&& visit) {
    visit(m.request, m.attempt, m.prefill_rank, m.input_length, m.output_length,
          m.first_token_wall_ns, m.remote_addr, m.first_token, m.stream, m.prefill_start_wall_ns,
          m.hash_ids, m.checksums);
  }
  Status Validate() const;
};

struct PrefillDone : WireMessage<PrefillDone> {
  static constexpr const char* kWireName = "PrefillDone";
  uint64_t request = 0;
  uint32_t attempt = 0;  // 0, or 1 once re-dispatched after a rank died
  int32_t prefill_rank = -1;
  int32_t blocks_loaded = 0;   // prefix blocks read from the store and verified
  int32_t blocks_missing = 0;  // prefix blocks the store no longer had (recomputed)
  int32_t blocks_computed = 0;
  int64_t first_token_wall_ns = 0;
  double compute_model_s = 0;  // modelled GPU time of this prefill
  uint64_t bytes_loaded = 0, bytes_stored = 0, bytes_to_decode = 0;
  int32_t first_token = -1;  // the token the prefill generated (-1: a modelled engine)
  uint8_t failed = 0;        // 1: the engine could not compute the prompt (the request fails)
  template <typename Self, typename Visit>
  static void Fields(Self& m, Visit&& visit) {
    visit(m.request, m.attempt, m.prefill_rank, m.blocks_loaded, m.blocks_missing,
          m.blocks_computed, m.first_token_wall_ns, m.compute_model_s, m.bytes_loaded,
          m.bytes_stored, m.bytes_to_decode, m.first_token, m.failed);
  }
};

struct KvArrived : WireMessage<KvArrived> {
  static constexpr const char* kWireName = "KvArrived";
  uint64_t request = 0;
  uint32_t attempt = 0;  // 0, or 1 once re-dispatched after a rank died
  int32_t decode_rank = -1;
  int32_t blocks_verified = 0;
  int32_t blocks_corrupt = 0;
  template <typename Self, typename Visit>
  static void Fields(Self& m, Visit&& visit) {
    visit(m.request, m.attempt, m.decode_rank, m.blocks_verified, m.blocks_corrupt);
  }
};
struct KvArrivedReply : WireMessage<KvArrivedReply> {
  static constexpr const char* kWireName = "KvArrivedReply";
  uint8_t admitted = 0;
  template <typename Self, typename Visit>
  static void Fields(Self& m, Visit&& visit) {
    visit(m.admitted);
  }
};

struct DecodeDone : WireMessage<DecodeDone> {
  static constexpr const char* kWireName = "DecodeDone";
  uint64_t request = 0;
  uint32_t attempt = 0;  // 0, or 1 once re-dispatched after a rank died
  int32_t decode_rank = -1;
  int32_t tokens = 0;
  double tbt_model_s = 0;
  int64_t done_wall_ns = 0;
  // Every generated token, the prefill's first included; empty from a modelled engine.
  std::vector<int32_t> output_ids;
  template <typename Self, typename Visit>
  static void Fields(Self& m, Visit&& visit) {
    visit(m.request, m.attempt, m.decode_rank, m.tokens, m.tbt_model_s, m.done_wall_ns,
          m.output_ids);
  }
  Status Validate() const;
};

// The tokens a decode rank generated since its last report, for the streamed requests in its
// batch: at most one message per decode rank every ServeConfig::stream_interval, whatever the
// batch size. Entry i: request requests[i] (attempt attempts[i]) generated counts[i] tokens, the
// next ones of `tokens`, the first of them at position offsets[i] of its output (0 is the
// prefill's token, which PrefillDone carries).
struct DecodeTokens : WireMessage<DecodeTokens> {
  static constexpr const char* kWireName = "DecodeTokens";
  int32_t decode_rank = -1;
  std::vector<uint64_t> requests;
  std::vector<uint32_t> attempts;
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> counts;
  std::vector<int32_t> tokens;
  template <typename Self, typename Visit>
  static void Fields(Self& m, Visit&& visit) {
    visit(m.decode_rank, m.requests, m.attempts, m.offsets, m.counts, m.tokens);
  }
  Status Validate() const;
};

}  // namespace mooncake::serve
