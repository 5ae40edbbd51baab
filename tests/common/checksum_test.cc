// Checksum64 is stored in object metadata and SSD files (as XXH3-64): its values must never
// change with the implementation behind it (the runtime-dispatched XXH3 today).
#include "common/checksum.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <vector>

namespace mooncake {
namespace {

TEST(Checksum64, EqualsPlainXxh3ForEverySizeAndAlignment) {
  std::vector<unsigned char> bytes(70'000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 131 + 7);
  for (size_t size : {0, 1, 3, 16, 17, 128, 129, 240, 241, 1024, 4096, 65'536, 69'999}) {
    for (size_t offset : {0, 1, 7}) {
      if (offset + size > bytes.size()) continue;
      EXPECT_EQ(Checksum64(bytes.data() + offset, size), XXH3_64bits(bytes.data() + offset, size))
          << "size " << size << " offset " << offset;
    }
  }
}

TEST(Checksum64, KnownValueOfEmptyInput) {
  // XXH3_64bits("") from the xxHash reference.
  EXPECT_EQ(Checksum64("", 0), 0x2D06800538D394C2ull);
}

}  // namespace
}  // namespace mooncake
