// StreamingCopy must equal memcpy for every length and alignment: it splits a copy into a cached
// head, a streamed body of 256-byte blocks and a cached tail, and an off-by-one in that split
// would drop or duplicate bytes at a boundary. LargeCopy, which picks memcpy, `rep movsb` or
// StreamingCopy by size, must equal memcpy too.
#include "common/streaming_copy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace mooncake {
namespace {

void ExpectEqualsMemcpyForEveryLengthAndAlignment() {
  std::vector<unsigned char> src(300'000);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  for (size_t length : {0, 1, 63, 16'383, 16'384, 16'385, 16'384 + 255, 65'536, 65'537, 262'143}) {
    for (size_t dst_offset : {0, 1, 63, 64, 100}) {
      for (size_t src_offset : {0, 3}) {
        std::vector<unsigned char> dst(length + 400, 0xEE);
        StreamingCopy(dst.data() + dst_offset, src.data() + src_offset, length);
        ASSERT_EQ(std::memcmp(dst.data() + dst_offset, src.data() + src_offset, length), 0)
            << "length " << length << " dst offset " << dst_offset << " src offset " << src_offset;
        // Nothing written outside [dst_offset, +length).
        for (size_t i = 0; i < dst_offset; ++i) ASSERT_EQ(dst[i], 0xEE) << "byte " << i;
        for (size_t i = dst_offset + length; i < dst.size(); ++i) {
          ASSERT_EQ(dst[i], 0xEE) << "byte " << i << " after length " << length;
        }
      }
    }
  }
}

TEST(StreamingCopy, EqualsMemcpyForEveryLengthAndAlignment) {
  ExpectEqualsMemcpyForEveryLengthAndAlignment();  // the body this CPU picks (AVX-512 here)
}

TEST(StreamingCopy, Sse2BodyEqualsMemcpyForEveryLengthAndAlignment) {
  ForceStreamingCopySse2ForTest(true);
  ExpectEqualsMemcpyForEveryLengthAndAlignment();
  ForceStreamingCopySse2ForTest(false);
}

// LargeCopy switches to `rep movsb` at 1 MiB and to streaming at 10 MiB (4 MiB without ERMS):
// both sides of each switch, at odd alignments, copy exactly the range.
TEST(LargeCopy, EqualsMemcpyAcrossItsSizeThresholds) {
  constexpr size_t kMiB = size_t{1} << 20;
  std::vector<unsigned char> src(11 * kMiB + 64);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  for (size_t length : {size_t{0}, size_t{4095}, kMiB - 1, kMiB, kMiB + 7, 4 * kMiB - 1, 4 * kMiB,
                        4 * kMiB + 129, 10 * kMiB - 1, 10 * kMiB, 10 * kMiB + 129}) {
    for (size_t dst_offset : {0, 1, 63}) {
      std::vector<unsigned char> dst(length + 128, 0xEE);
      LargeCopy(dst.data() + dst_offset, src.data() + 3, length);
      ASSERT_EQ(std::memcmp(dst.data() + dst_offset, src.data() + 3, length), 0)
          << "length " << length << " dst offset " << dst_offset;
      for (size_t i = 0; i < dst_offset; ++i) ASSERT_EQ(dst[i], 0xEE) << "byte " << i;
      for (size_t i = dst_offset + length; i < dst.size(); ++i) {
        ASSERT_EQ(dst[i], 0xEE) << "byte " << i << " after length " << length;
      }
    }
  }
}

}  // namespace
}  // namespace mooncake
