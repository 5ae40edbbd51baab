#include "common/checksum.h"

#include <xxhash.h>

namespace mooncake {

uint64_t Checksum64(const void* data, size_t size) { return XXH3_64bits(data, size); }

}  // namespace mooncake
