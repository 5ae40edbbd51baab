#include "serve/messages.h"

#include <string>

#include "common/wire.h"

namespace mooncake::serve {
namespace {

void PutIds(WireWriter& w, const std::vector<uint64_t>& ids) {
  w.Put<uint32_t>(static_cast<uint32_t>(ids.size()));
  for (uint64_t id : ids) w.Put(id);
}

bool GetIds(WireReader& r, std::vector<uint64_t>* ids) {
  uint32_t n = 0;
  if (!r.Get(&n) || n > kMaxBlocksPerRequest || r.remaining() < n * sizeof(uint64_t)) return false;
  ids->resize(n);
  for (uint64_t& id : *ids) r.Get(&id);
  return r.ok();
}

template <typename T>
Result<T> Finish(const WireReader& r, T value, const char* name) {
  if (!r.done()) return ProtocolError(std::string("malformed ") + name + " message");
  return value;
}

}  // namespace

std::vector<std::byte> PrefillTask::Encode() const {
  WireWriter w;
  w.Put(request);
  w.Put(attempt);
  w.Put(input_length);
  w.Put(output_length);
  w.Put(decode_rank);
  w.Put(local_prefix_blocks);
  w.Put(prefix_blocks);
  w.Put(prefix_tokens);
  w.Put(t_transfer_ns);
  w.Put(arrival_wall_ns);
  PutIds(w, hash_ids);
  return w.Take();
}

Result<PrefillTask> PrefillTask::Decode(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  PrefillTask t;
  r.Get(&t.request);
  r.Get(&t.attempt);
  r.Get(&t.input_length);
  r.Get(&t.output_length);
  r.Get(&t.decode_rank);
  r.Get(&t.local_prefix_blocks);
  r.Get(&t.prefix_blocks);
  r.Get(&t.prefix_tokens);
  r.Get(&t.t_transfer_ns);
  r.Get(&t.arrival_wall_ns);
  GetIds(r, &t.hash_ids);
  if (r.ok() && (t.local_prefix_blocks < 0 || t.prefix_blocks < t.local_prefix_blocks ||
                 t.prefix_blocks > static_cast<int32_t>(t.hash_ids.size()) || t.input_length < 0)) {
    return ProtocolError("PrefillTask with inconsistent prefix lengths");
  }
  return Finish(r, std::move(t), "PrefillTask");
}

std::vector<std::byte> KvOffer::Encode() const {
  WireWriter w;
  w.Put(request);
  w.Put(bytes);
  return w.Take();
}
Result<KvOffer> KvOffer::Decode(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  KvOffer o;
  r.Get(&o.request);
  r.Get(&o.bytes);
  return Finish(r, o, "KvOffer");
}

std::vector<std::byte> KvOfferReply::Encode() const {
  WireWriter w;
  w.Put(remote_addr);
  return w.Take();
}
Result<KvOfferReply> KvOfferReply::Decode(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  KvOfferReply o;
  r.Get(&o.remote_addr);
  return Finish(r, o, "KvOfferReply");
}

std::vector<std::byte> KvDone::Encode() const {
  WireWriter w;
  w.Put(request);
  w.Put(attempt);
  w.Put(prefill_rank);
  w.Put(input_length);
  w.Put(output_length);
  w.Put(first_token_wall_ns);
  w.Put(remote_addr);
  PutIds(w, hash_ids);
  return w.Take();
}
Result<KvDone> KvDone::Decode(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  KvDone d;
  r.Get(&d.request);
  r.Get(&d.attempt);
  r.Get(&d.prefill_rank);
  r.Get(&d.input_length);
  r.Get(&d.output_length);
  r.Get(&d.first_token_wall_ns);
  r.Get(&d.remote_addr);
  GetIds(r, &d.hash_ids);
  return Finish(r, std::move(d), "KvDone");
}

std::vector<std::byte> PrefillDone::Encode() const {
  WireWriter w;
  w.Put(request);
  w.Put(attempt);
  w.Put(prefill_rank);
  w.Put(blocks_loaded);
  w.Put(blocks_missing);
  w.Put(blocks_computed);
  w.Put(first_token_wall_ns);
  w.Put(compute_model_s);
  w.Put(bytes_loaded);
  w.Put(bytes_stored);
  w.Put(bytes_to_decode);
  return w.Take();
}
Result<PrefillDone> PrefillDone::Decode(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  PrefillDone d;
  r.Get(&d.request);
  r.Get(&d.attempt);
  r.Get(&d.prefill_rank);
  r.Get(&d.blocks_loaded);
  r.Get(&d.blocks_missing);
  r.Get(&d.blocks_computed);
  r.Get(&d.first_token_wall_ns);
  r.Get(&d.compute_model_s);
  r.Get(&d.bytes_loaded);
  r.Get(&d.bytes_stored);
  r.Get(&d.bytes_to_decode);
  return Finish(r, d, "PrefillDone");
}

std::vector<std::byte> KvArrived::Encode() const {
  WireWriter w;
  w.Put(request);
  w.Put(attempt);
  w.Put(decode_rank);
  w.Put(blocks_verified);
  w.Put(blocks_corrupt);
  return w.Take();
}
Result<KvArrived> KvArrived::Decode(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  KvArrived a;
  r.Get(&a.request);
  r.Get(&a.attempt);
  r.Get(&a.decode_rank);
  r.Get(&a.blocks_verified);
  r.Get(&a.blocks_corrupt);
  return Finish(r, a, "KvArrived");
}

std::vector<std::byte> KvArrivedReply::Encode() const {
  WireWriter w;
  w.Put(admitted);
  return w.Take();
}
Result<KvArrivedReply> KvArrivedReply::Decode(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  KvArrivedReply a;
  r.Get(&a.admitted);
  return Finish(r, a, "KvArrivedReply");
}

std::vector<std::byte> DecodeDone::Encode() const {
  WireWriter w;
  w.Put(request);
  w.Put(attempt);
  w.Put(decode_rank);
  w.Put(tokens);
  w.Put(tbt_model_s);
  w.Put(done_wall_ns);
  return w.Take();
}
Result<DecodeDone> DecodeDone::Decode(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  DecodeDone d;
  r.Get(&d.request);
  r.Get(&d.attempt);
  r.Get(&d.decode_rank);
  r.Get(&d.tokens);
  r.Get(&d.tbt_model_s);
  r.Get(&d.done_wall_ns);
  return Finish(r, d, "DecodeDone");
}

}  // namespace mooncake::serve
