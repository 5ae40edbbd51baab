// The manifest: piece layout, and the checks a receiver relies on before it creates files
// under the names a peer sent.
#include "p2p/manifest.h"

#include <gtest/gtest.h>

#include "common/wire_fields.h"
#include "p2p/messages.h"

namespace mooncake::p2p {
namespace {

Manifest TwoFiles() {
  Manifest m;
  m.name = "ckpt";
  m.piece_size = 4096;
  m.entries = {{"ckpt/a", 10000, 0644}, {"ckpt/empty", 0, 0600}, {"ckpt/sub/b", 4096, 0644}};
  m.checksums.assign(CountPieces(m.entries, m.piece_size), 7);
  return m;
}

TEST(Manifest, PiecesNeverSpanEntriesAndEmptyEntriesHaveNone) {
  const Manifest m = TwoFiles();
  const PieceLayout layout(m.entries, m.piece_size);
  ASSERT_EQ(layout.count(), 4u);  // 3 for 10000 B, 0 for the empty file, 1 for 4096 B
  EXPECT_EQ(layout[2].entry, 0u);
  EXPECT_EQ(layout[2].offset, 8192u);
  EXPECT_EQ(layout[2].length, 10000u - 8192u);
  EXPECT_EQ(layout[3].entry, 2u);
  EXPECT_EQ(layout[3].length, 4096u);
  EXPECT_EQ(layout.total_bytes(), 14096u);
  EXPECT_EQ(layout.entry_offset(2), 10000u);
}

TEST(Manifest, RoundTripsThroughTheWire) {
  const Manifest m = TwoFiles();
  auto back = DecodeManifest(EncodeManifest(m));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, m);
}

TEST(Manifest, UnsafePathsAreRefused) {
  for (const char* path : {"/etc/passwd", "../x", "a/../b", "a//b", "./a", "a/", ""}) {
    Manifest m = TwoFiles();
    m.entries[0].path = path;
    EXPECT_EQ(m.Validate().code(), ErrorCode::kInvalidArgument) << path;
    EXPECT_FALSE(DecodeManifest(EncodeManifest(m)).ok()) << path;
  }
}

TEST(Manifest, DuplicatePathsAndWrongChecksumCountsAreRefused) {
  Manifest dup = TwoFiles();
  dup.entries[2].path = dup.entries[0].path;
  EXPECT_NE(dup.Validate().message().find("appears twice"), std::string::npos);
  Manifest short_sums = TwoFiles();
  short_sums.checksums.pop_back();
  EXPECT_NE(short_sums.Validate().message().find("3 checksums for 4 pieces"), std::string::npos);
  Manifest tiny = TwoFiles();
  tiny.piece_size = 1024;
  EXPECT_FALSE(tiny.Validate().ok());
}

TEST(Manifest, TruncatedOrTrailingBytesAreRefused) {
  auto bytes = EncodeManifest(TwoFiles());
  for (size_t cut : {size_t{0}, size_t{1}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_FALSE(DecodeManifest(std::span(bytes.data(), cut)).ok()) << cut;
  }
  bytes.push_back(std::byte{0});
  EXPECT_FALSE(DecodeManifest(bytes).ok());
}

TEST(Messages, UpdateAnswerWithAnUnknownEventKindIsRefused) {
  UpdateResponse r;
  r.events.push_back({static_cast<EventKind>(9), 1, 0});
  EXPECT_FALSE(WireDecode<UpdateResponse>(WireEncode(r), "update").ok());
  r.events[0].kind = EventKind::kLanded;
  EXPECT_TRUE(WireDecode<UpdateResponse>(WireEncode(r), "update").ok());
}

}  // namespace
}  // namespace mooncake::p2p
