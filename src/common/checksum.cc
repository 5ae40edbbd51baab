#include "common/checksum.h"

#include <xxh_x86dispatch.h>
#include <xxhash.h>

namespace mooncake {

// libxxhash's runtime-dispatched XXH3 (AVX2/AVX-512 when the CPU has them): the same values as
// XXH3_64bits, about 3x faster on this machine than the SSE2 build of the plain entry point.
uint64_t Checksum64(const void* data, size_t size) { return XXH3_64bits_dispatch(data, size); }

}  // namespace mooncake
