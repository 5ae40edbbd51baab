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

}  // namespace mooncake::serve
