#include "engine/cost_model_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "support/paper_cost_model.h"

namespace mooncake::engine {
namespace {

class CostModelEngineTest : public ::testing::Test {
 protected:
  CostModel cost_ = testing::Llama70bA800();
  KvLayout layout_{cost_, 1.0 / 8192, "llama3-70b"};
};

// Staging comes from the engine: host memory of the asked size, zeroed as before the seam.
TEST_F(CostModelEngineTest, AllocatesZeroedHostMemory) {
  CostModelEngine engine(cost_, layout_);
  auto memory = engine.AllocateKv(3 * layout_.block_bytes());
  ASSERT_EQ(memory->bytes().size(), 3 * layout_.block_bytes());
  EXPECT_EQ(memory->kind(), KvMemoryKind::kHost);
  EXPECT_TRUE(std::all_of(memory->bytes().begin(), memory->bytes().end(),
                          [](std::byte b) { return b == std::byte{0}; }));
  EXPECT_EQ(engine.block_bytes(), layout_.block_bytes());
}

// A chunk writes the KV of the blocks it completes, and only those, and takes the cost model's
// time for the chunk after its prefix, times model_error (the roles' timing before the seam).
TEST_F(CostModelEngineTest, PrefillWritesTheCompletedBlocksAndTakesTheModelledTime) {
  CostModelEngine engine(cost_, layout_, 1.25);
  const uint64_t bb = layout_.block_bytes();
  const std::vector<uint64_t> hashes = {11, 12, 13, 14};
  std::vector<std::byte> kv(hashes.size() * bb);
  PrefillChunk chunk;
  chunk.hash_ids = hashes;
  chunk.input_length = 2000;
  chunk.prefix_tokens = 512;
  chunk.tokens = 1024;
  chunk.first_block = 1;
  chunk.end_block = 3;
  chunk.kv = kv;
  const EngineTime t = engine.Prefill(chunk).time;
  EXPECT_TRUE(t.modelled);
  EXPECT_EQ(t.model, std::chrono::duration_cast<Nanos>(cost_.PrefillChunkTime(512, 1024) * 1.25));
  auto block = [&](int b) { return std::span<const std::byte>(kv).subspan(b * bb, bb); };
  EXPECT_FALSE(layout_.Verify(11, block(0)));  // the prefix: not the engine's to write
  EXPECT_TRUE(layout_.Verify(12, block(1)));
  EXPECT_TRUE(layout_.Verify(13, block(2)));
  EXPECT_FALSE(layout_.Verify(14, block(3)));  // not complete yet
}

// A decode step costs the cost model's step for the batch and its whole context.
TEST_F(CostModelEngineTest, DecodeTakesTheStepTimeOfTheBatchAndItsContext) {
  CostModelEngine engine(cost_, layout_, 2.0);
  const std::vector<DecodeSeq> batch = {{1, 1000}, {2, 3000}, {3, 24}};
  const DecodeStep step = engine.Decode(batch);
  EXPECT_TRUE(step.time.modelled);
  EXPECT_EQ(step.time.model,
            std::chrono::duration_cast<Nanos>(cost_.DecodeStepTime(3, 4024) * 2.0));
  EXPECT_EQ(step.next_tokens, std::vector<int32_t>(3, kNoToken));
}

}  // namespace
}  // namespace mooncake::engine
