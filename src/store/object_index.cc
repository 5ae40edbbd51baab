#include "store/object_index.h"

#include "common/checksum.h"

namespace mooncake::store {

uint64_t KeyHash(std::string_view key) { return Checksum64(key.data(), key.size()); }

}  // namespace mooncake::store
