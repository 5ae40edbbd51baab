// How a request is cut into slices: slices of `slice_size` bytes, the last one shorter.
// Many slices stay in flight at once, so one large request uses the link like many small ones.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mooncake::transport {

struct Slice {
  size_t offset;
  size_t length;
};

inline uint32_t SliceCount(size_t length, size_t slice_size) {
  if (length == 0) return 0;
  if (slice_size == 0 || length <= slice_size) return 1;
  return static_cast<uint32_t>((length + slice_size - 1) / slice_size);
}

inline Slice SliceAt(size_t length, size_t slice_size, uint32_t index) {
  if (slice_size == 0 || length <= slice_size) return {0, length};
  size_t offset = static_cast<size_t>(index) * slice_size;
  size_t len = length - offset < slice_size ? length - offset : slice_size;
  return {offset, len};
}

}  // namespace mooncake::transport
