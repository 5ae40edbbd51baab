#include "engine/kv_layout.h"

#include <gtest/gtest.h>

#include <vector>

#include "support/paper_cost_model.h"

namespace mooncake::engine {
namespace {

// A store key names its block: the conductor turns the keys of lost objects back into blocks.
TEST(KvLayout, HashOfKeyInvertsKeyAndRefusesOtherKeys) {
  const CostModel cost = testing::Llama70bA800();
  const KvLayout layout(cost, 1.0 / 8192, "llama3-70b");
  EXPECT_EQ(layout.HashOfKey(layout.Key(12345)), 12345u);
  EXPECT_EQ(layout.HashOfKey(layout.Key(0)), 0u);
  EXPECT_FALSE(layout.HashOfKey("other-model/12"));
  EXPECT_FALSE(layout.HashOfKey("llama3-70b/"));
  EXPECT_FALSE(layout.HashOfKey("llama3-70b/12x"));
  EXPECT_FALSE(layout.HashOfKey("llama3-70b/99999999999999999999999"));
}

// A filled block verifies as its own hash id only, layer piece by layer piece.
TEST(KvLayout, AFilledBlockVerifiesAsItsOwnHashOnly) {
  const CostModel cost = testing::Llama70bA800();
  const KvLayout layout(cost, 1.0 / 8192, "llama3-70b");
  std::vector<std::byte> block(layout.block_bytes());
  layout.Fill(7, block);
  EXPECT_TRUE(layout.Verify(7, block));
  EXPECT_FALSE(layout.Verify(8, block));
  block[layout.piece_bytes() * (layout.layers() - 1)] ^= std::byte{1};  // the last layer's piece
  EXPECT_FALSE(layout.Verify(7, block));
}

}  // namespace
}  // namespace mooncake::engine
