#include "serve/messages.h"

namespace mooncake::serve {

Status PrefillTask::Validate() const {
  if (hash_ids.size() > kMaxBlocksPerRequest) return ProtocolError("PrefillTask: too many blocks");
  if (local_prefix_blocks < 0 || prefix_blocks < local_prefix_blocks ||
      prefix_blocks > static_cast<int32_t>(hash_ids.size()) || input_length < 0) {
    return ProtocolError("PrefillTask with inconsistent prefix lengths");
  }
  return Status::Ok();
}

Status KvDone::Validate() const {
  if (hash_ids.size() > kMaxBlocksPerRequest) return ProtocolError("KvDone: too many blocks");
  return Status::Ok();
}

}  // namespace mooncake::serve
