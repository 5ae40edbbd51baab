// Moving a piece with the CPU and checking it in the same pass.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mooncake::p2p {

// Copies `length` bytes from `src` (a peer's copy mapped into this process) to `dst` and
// returns the XXH3-64 of the bytes copied (the value common/checksum.h's Checksum64 gives).
// Chunk by chunk: each chunk is copied, then hashed from the source lines the copy just
// brought into L1, so the check costs no second pass over memory. Hashing the source after the
// copy still catches a change to it during the copy (a store the copy saw precedes the hash's
// load in coherence order). Large copies bypass the cache (common/streaming_copy.h): a piece is
// not read again soon by this core.
uint64_t CopyAndHash(std::byte* dst, const std::byte* src, size_t length);

}  // namespace mooncake::p2p
