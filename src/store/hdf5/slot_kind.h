// SlotKind: what an index slot of a bucket file holds (bucket_file.h). No HDF5 here: the tier's
// header and tests include it.
#pragma once

#include <cstdint>

namespace mooncake::store::hdf5 {

enum class SlotKind : uint32_t { kUnused = 0, kBlock = 1, kTombstone = 2 };

}  // namespace mooncake::store::hdf5
