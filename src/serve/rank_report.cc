#include "serve/rank_report.h"

#include "common/wire.h"

namespace mooncake::serve {

void RankReport::Add(const RankReport& other) {
  errors += other.errors;
  blocks_verified += other.blocks_verified;
  blocks_corrupt += other.blocks_corrupt;
  tokens += other.tokens;
  max_batch = std::max(max_batch, other.max_batch);
  store_put_failures += other.store_put_failures;
  if (first_error.empty()) first_error = other.first_error;
}

void RankReport::AddError(const std::string& message) {
  ++errors;
  if (first_error.empty()) first_error = message;
}

std::vector<std::byte> RankReport::Encode() const {
  WireWriter w;
  for (uint64_t v :
       {errors, blocks_verified, blocks_corrupt, tokens, max_batch, store_put_failures}) {
    w.Put(v);
  }
  w.PutString(first_error);
  return w.Take();
}

Result<RankReport> RankReport::Decode(std::span<const std::byte> bytes) {
  RankReport r;
  WireReader in(bytes);
  for (uint64_t* v : {&r.errors, &r.blocks_verified, &r.blocks_corrupt, &r.tokens, &r.max_batch,
                      &r.store_put_failures}) {
    in.Get(v);
  }
  in.GetString(&r.first_error);
  if (!in.done()) return ProtocolError("malformed RankReport");
  return r;
}

}  // namespace mooncake::serve
