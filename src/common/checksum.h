// 64-bit content checksums (XXH3). Every stored object and every moved KV block carries one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mooncake {

uint64_t Checksum64(const void* data, size_t size);

}  // namespace mooncake
