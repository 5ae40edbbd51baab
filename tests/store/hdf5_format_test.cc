// The SSD tier's on-disk format version (issue 27): keys became length-prefixed byte strings and
// blocks carry versions in format 2, so a folder of format-1 bucket files is refused at Open with
// a message naming the file and the versions, never read as if it were format 2.
#include <gtest/gtest.h>

#include "../support/scratch_dir.h"
#include "store/hdf5/bucket_file.h"
#include "store/hdf5/tier.h"

namespace mooncake::store::hdf5 {
namespace {

TEST(Hdf5FormatTest, AFileOfAnotherFormatVersionIsRefusedByName) {
  test_support::ScratchDir scratch{"mooncake-hdf5-format"};
  const std::string path = scratch.path() + "/bucket-00000000.h5";
  BucketAttributes old;
  old.format_version = 1;
  ASSERT_TRUE(BucketFile::Create(path, old, 1 << 20, 8).ok());
  Hdf5TierOptions o;
  o.dir = scratch.path();
  o.capacity = 4 << 20;
  o.bucket_bytes = 1 << 20;
  RecoveryReport report;
  auto t = Hdf5Tier::Open(o, &report);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), ErrorCode::kNotSupported);
  EXPECT_NE(t.status().message().find(path), std::string::npos) << t.status().ToString();
  EXPECT_NE(t.status().message().find("format version 1"), std::string::npos);
}

}  // namespace
}  // namespace mooncake::store::hdf5
