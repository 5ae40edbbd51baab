#include "p2p/copy_hash.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t's layout: the state lives on the stack
#include <xxh_x86dispatch.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "common/streaming_copy.h"

namespace mooncake::p2p {
namespace {
constexpr size_t kChunk = 16 * 1024;         // a chunk and its hash stay in L1
constexpr size_t kStreamBytes = 256 * 1024;  // from here on the copy bypasses the cache
}  // namespace

uint64_t CopyAndHash(std::byte* dst, const std::byte* src, size_t length) {
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  const bool stream = length >= kStreamBytes;
  for (size_t off = 0; off < length; off += kChunk) {
    const size_t len = std::min(kChunk, length - off);
    if (stream) {
      StreamingCopy(dst + off, src + off, len);
    } else {
      std::memcpy(dst + off, src + off, len);
    }
    XXH3_64bits_update_dispatch(&state, src + off, len);
  }
  return XXH3_64bits_digest(&state);
}

}  // namespace mooncake::p2p
