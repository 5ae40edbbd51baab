#include "serve/rank_report.h"

#include <algorithm>

#include "common/wire.h"

namespace mooncake::serve {

void RankReport::Add(const RankReport& other) {
  errors += other.errors;
  blocks_verified += other.blocks_verified;
  blocks_corrupt += other.blocks_corrupt;
  tokens += other.tokens;
  max_batch = std::max(max_batch, other.max_batch);
  store_put_failures += other.store_put_failures;
  peer_loss_aborts += other.peer_loss_aborts;
  if (ssd.size() < other.ssd.size()) ssd.resize(other.ssd.size(), 0);
  for (size_t i = 0; i < other.ssd.size(); ++i) ssd[i] += other.ssd[i];
  if (first_error.empty()) first_error = other.first_error;
}

void RankReport::AddError(const std::string& message) {
  ++errors;
  if (first_error.empty()) first_error = message;
}

std::vector<std::byte> RankReport::Encode() const {
  WireWriter w;
  for (uint64_t v : {errors, blocks_verified, blocks_corrupt, tokens, max_batch, store_put_failures,
                     peer_loss_aborts}) {
    w.Put(v);
  }
  w.Put<uint32_t>(static_cast<uint32_t>(ssd.size()));
  for (uint64_t v : ssd) w.Put(v);
  w.PutString(first_error);
  return w.Take();
}

Result<RankReport> RankReport::Decode(std::span<const std::byte> bytes) {
  RankReport r;
  WireReader in(bytes);
  for (uint64_t* v : {&r.errors, &r.blocks_verified, &r.blocks_corrupt, &r.tokens, &r.max_batch,
                      &r.store_put_failures, &r.peer_loss_aborts}) {
    in.Get(v);
  }
  uint32_t n = 0;
  if (in.Get(&n) && n <= 64 && in.remaining() >= n * sizeof(uint64_t)) {
    r.ssd.resize(n);
    for (uint64_t& v : r.ssd) in.Get(&v);
  } else {
    return ProtocolError("malformed RankReport: SSD counters");
  }
  in.GetString(&r.first_error);
  if (!in.done()) return ProtocolError("malformed RankReport");
  return r;
}

}  // namespace mooncake::serve
