#include "model/generate.h"

#include <gtest/gtest.h>

namespace mooncake::model {
namespace {

Transformer TinyWithEos(int32_t eos) {
  auto m = LoadModel("tiny", 1);
  EXPECT_TRUE(m.ok());
  m->config.eos_token_id = eos;
  auto t = Transformer::Create(std::move(*m));
  EXPECT_TRUE(t.ok());
  return std::move(*t);
}

TEST(GenerateTest, ExactlyMaxTokensUnlessStopAtEos) {
  const std::vector<int32_t> prompt{1, 5, 9};
  GenerateOptions options;
  options.max_tokens = 8;
  auto free_run = Generate(TinyWithEos(2), prompt, options);
  ASSERT_TRUE(free_run.ok());
  ASSERT_EQ(free_run->output_ids.size(), 8u);
  // Make the third generated token the end-of-sequence token: it stops there only when asked.
  const Transformer t = TinyWithEos(free_run->output_ids[2]);
  auto ignored = Generate(t, prompt, options);
  ASSERT_TRUE(ignored.ok());
  EXPECT_EQ(ignored->output_ids, free_run->output_ids);
  options.stop_at_eos = true;
  auto stopped = Generate(t, prompt, options);
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->output_ids,
            std::vector<int32_t>(free_run->output_ids.begin(), free_run->output_ids.begin() + 3));
  EXPECT_EQ(stopped->prompt_logits, free_run->prompt_logits);
}

TEST(GenerateTest, ZeroTokensAndEmptyPrompts) {
  const Transformer t = TinyWithEos(2);
  GenerateOptions options;
  const std::vector<int32_t> prompt{7};
  auto none = Generate(t, prompt, options);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->output_ids.empty());
  EXPECT_EQ(none->prompt_logits.size(), 512u);
  EXPECT_FALSE(Generate(t, std::vector<int32_t>{}, options).ok());
}

TEST(KvCacheTest, BlocksAppendOnlyOnABoundaryAndWhole) {
  const KvShape shape{2, 2, 4, 8};
  KvCache cache(shape);
  const std::vector<float> block(shape.BlockFloats(), 1.0f);
  ASSERT_TRUE(cache.AppendBlock(block, 8).ok());
  ASSERT_TRUE(cache.AppendBlock(block, 3).ok());  // a partial last block
  EXPECT_EQ(cache.tokens(), 11);
  EXPECT_EQ(cache.AppendBlock(block, 8).code(), ErrorCode::kInvalidArgument);
  KvCache other(shape);
  EXPECT_EQ(other.AppendBlock(std::vector<float>(5), 8).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(other.AppendBlock(block, 9).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(shape.Index(1, 1, 1, 3, 7), shape.BlockFloats() - 1);
}

}  // namespace
}  // namespace mooncake::model
