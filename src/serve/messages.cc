#include "serve/messages.h"

namespace mooncake::serve {

Status PrefillTask::Validate() const {
  if (hash_ids.size() > kMaxBlocksPerRequest) return ProtocolError("PrefillTask: too many blocks");
  if (local_prefix_blocks < 0 || prefix_blocks < local_prefix_blocks ||
      prefix_blocks > static_cast<int32_t>(hash_ids.size()) || input_length < 0) {
    return ProtocolError("PrefillTask with inconsistent prefix lengths");
  }
  if (!prompt_ids.empty() && static_cast<int64_t>(prompt_ids.size()) != input_length) {
    return ProtocolError("PrefillTask: " + std::to_string(prompt_ids.size()) +
                         " prompt tokens for an input of " + std::to_string(input_length));
  }
  return Status::Ok();
}

Status KvDone::Validate() const {
  if (hash_ids.size() > kMaxBlocksPerRequest) return ProtocolError("KvDone: too many blocks");
  if (checksums.size() != hash_ids.size()) {
    return ProtocolError("KvDone: " + std::to_string(checksums.size()) + " checksums for " +
                         std::to_string(hash_ids.size()) + " blocks");
  }
  return Status::Ok();
}

Status DecodeDone::Validate() const {
  if (output_ids.size() > kMaxOutputTokens) return ProtocolError("DecodeDone: too many tokens");
  return Status::Ok();
}

Status DecodeTokens::Validate() const {
  const size_t n = requests.size();
  if (attempts.size() != n || offsets.size() != n || counts.size() != n) {
    return ProtocolError("DecodeTokens: " + std::to_string(n) + " requests but " +
                         std::to_string(attempts.size()) + " attempts, " +
                         std::to_string(offsets.size()) + " offsets, " +
                         std::to_string(counts.size()) + " counts");
  }
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) {
    if (static_cast<uint64_t>(offsets[i]) + counts[i] > kMaxOutputTokens) {
      return ProtocolError("DecodeTokens: request " + std::to_string(requests[i]) +
                           " past the most tokens a request has");
    }
    sum += counts[i];
  }
  if (sum != tokens.size()) {
    return ProtocolError("DecodeTokens: counts add up to " + std::to_string(sum) + ", " +
                         std::to_string(tokens.size()) + " tokens sent");
  }
  return Status::Ok();
}

}  // namespace mooncake::serve
