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

// Which dispatch of which request a message is about. A request re-dispatched (after a rank died,
// or by a conductor that took over) is told apart from its earlier dispatches, whose late messages
// are then dropped, and a call asked again after a timeout (a KvOffer, a KvArrived) is recognised
// and answered as before.
struct RequestAttempt {
  uint64_t request = 0;
  uint32_t attempt = 0;  // 0 at first, one more at each re-dispatch, from 16 after a takeover
};

struct PrefillTask : WireMessage<PrefillTask>, RequestAttempt {
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

  MC_WIRE_MESSAGE(PrefillTask, request, attempt, input_length, output_length, decode_rank,
                  local_prefix_blocks, prefix_blocks, prefix_tokens, t_transfer_ns, arrival_wall_ns,
                  hash_ids, prompt_ids, stream)
  Status Validate() const;
};

struct KvOffer : WireMessage<KvOffer>, RequestAttempt {
  uint64_t bytes = 0;  // the whole request's KV (blocks x block bytes)
  MC_WIRE_MESSAGE(KvOffer, request, attempt, bytes)
};
struct KvOfferReply : WireMessage<KvOfferReply> {
  uint64_t remote_addr = 0;  // where in the decode rank's receive buffer to write
  MC_WIRE_MESSAGE(KvOfferReply, remote_addr)
};

struct KvDone : WireMessage<KvDone>, RequestAttempt {
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
  MC_WIRE_MESSAGE(KvDone, request, attempt, prefill_rank, input_length, output_length,
                  first_token_wall_ns, remote_addr, first_token, stream, prefill_start_wall_ns,
                  hash_ids, checksums)
  Status Validate() const;
};

struct PrefillDone : WireMessage<PrefillDone>, RequestAttempt {
  int32_t prefill_rank = -1;
  int32_t blocks_loaded = 0;   // prefix blocks read from the store and verified
  int32_t blocks_missing = 0;  // prefix blocks the store no longer had (recomputed)
  int32_t blocks_computed = 0;
  int64_t first_token_wall_ns = 0;
  double compute_model_s = 0;  // modelled GPU time of this prefill
  uint64_t bytes_loaded = 0, bytes_stored = 0, bytes_to_decode = 0;
  int32_t first_token = -1;  // the token the prefill generated (-1: a modelled engine)
  uint8_t failed = 0;        // 1: the engine could not compute the prompt (the request fails)
  MC_WIRE_MESSAGE(PrefillDone, request, attempt, prefill_rank, blocks_loaded, blocks_missing,
                  blocks_computed, first_token_wall_ns, compute_model_s, bytes_loaded, bytes_stored,
                  bytes_to_decode, first_token, failed)
};

struct KvArrived : WireMessage<KvArrived>, RequestAttempt {
  int32_t decode_rank = -1;
  int32_t blocks_verified = 0;
  int32_t blocks_corrupt = 0;
  MC_WIRE_MESSAGE(KvArrived, request, attempt, decode_rank, blocks_verified, blocks_corrupt)
};
struct KvArrivedReply : WireMessage<KvArrivedReply> {
  uint8_t admitted = 0;
  MC_WIRE_MESSAGE(KvArrivedReply, admitted)
};

struct DecodeDone : WireMessage<DecodeDone>, RequestAttempt {
  int32_t decode_rank = -1;
  int32_t tokens = 0;
  double tbt_model_s = 0;
  int64_t done_wall_ns = 0;
  // Every generated token, the prefill's first included; empty from a modelled engine.
  std::vector<int32_t> output_ids;
  MC_WIRE_MESSAGE(DecodeDone, request, attempt, decode_rank, tokens, tbt_model_s, done_wall_ns,
                  output_ids)
  Status Validate() const;
};

// The tokens a decode rank generated since its last report, for the streamed requests in its
// batch: at most one message per decode rank every ServeConfig::stream_interval, whatever the
// batch size. Entry i: request requests[i] (attempt attempts[i]) generated counts[i] tokens, the
// next ones of `tokens`, the first of them at position offsets[i] of its output (0 is the
// prefill's token, which PrefillDone carries).
struct DecodeTokens : WireMessage<DecodeTokens> {
  int32_t decode_rank = -1;
  std::vector<uint64_t> requests;
  std::vector<uint32_t> attempts;
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> counts;
  std::vector<int32_t> tokens;
  MC_WIRE_MESSAGE(DecodeTokens, decode_rank, requests, attempts, offsets, counts, tokens)
  Status Validate() const;
};

}  // namespace mooncake::serve
