#include "model/transformer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>

namespace mooncake::model {
namespace {

Transformer Tiny(uint64_t seed = 1) {
  auto m = LoadModel("tiny", seed);
  EXPECT_TRUE(m.ok());
  auto t = Transformer::Create(std::move(*m));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(*t);
}

// Wider than tiny: matmuls of k = 256 and 704, where BLIS's shape-chosen kernels differed.
Transformer Wide() {
  ModelConfig c = *PresetConfig("tiny");
  c.name = "wide";
  c.hidden_size = 256;
  c.intermediate_size = 704;
  c.num_layers = 1;
  c.head_dim = 64;
  LoadedModel m{c, SeededWeights(c, 5)};
  auto t = Transformer::Create(std::move(m));
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(*t);
}

std::vector<int32_t> Prompt(int n, int salt) {
  std::vector<int32_t> p(n);
  for (int i = 0; i < n; ++i) p[i] = (i * 37 + salt * 101 + 5) % 512;
  return p;
}

bool SameBits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

bool SameKv(const KvCache& a, const KvCache& b) {
  if (a.tokens() != b.tokens() || a.num_blocks() != b.num_blocks()) return false;
  for (size_t i = 0; i < a.num_blocks(); ++i) {
    if (!SameBits(a.block(i), b.block(i))) return false;
  }
  return true;
}

// Prefills `prompt` in chunks of the given sizes (their sum is the prompt's length).
KvCache Chunked(const Transformer& t, const std::vector<int32_t>& prompt,
                const std::vector<int>& chunks, int32_t block_tokens, std::vector<float>* logits) {
  KvCache cache(t.KvShapeFor(block_tokens));
  size_t at = 0;
  for (int n : chunks) {
    EXPECT_TRUE(t.Prefill(std::span(prompt).subspan(at, n), &cache, logits).ok());
    at += n;
  }
  EXPECT_EQ(at, prompt.size());
  return cache;
}

class DeterminismTest : public ::testing::TestWithParam<bool> {
 protected:
  Transformer Model() const { return GetParam() ? Wide() : Tiny(); }
};
INSTANTIATE_TEST_SUITE_P(TinyAndWide, DeterminismTest, ::testing::Bool());

TEST_P(DeterminismTest, OnePassChunkedAndLoadedPrefixesGiveTheSameKvBits) {
  const Transformer t = Model();
  // 300 tokens: BLIS chose its kernels by shape below and above about 200 rows.
  const std::vector<int32_t> prompt = Prompt(300, 1);
  std::vector<float> one_logits, chunk_logits, loaded_logits;
  const KvCache one = Chunked(t, prompt, {300}, 16, &one_logits);
  const KvCache chunks = Chunked(t, prompt, {1, 16, 5, 21, 27, 100, 130}, 16, &chunk_logits);
  EXPECT_TRUE(SameKv(one, chunks));
  EXPECT_TRUE(SameBits(one_logits, chunk_logits));
  // A cache continued from the first three blocks (48 tokens), copied as a store would.
  KvCache loaded(t.KvShapeFor(16));
  for (size_t b = 0; b < 3; ++b) ASSERT_TRUE(loaded.AppendBlock(one.block(b), 16).ok());
  ASSERT_TRUE(t.Prefill(std::span(prompt).subspan(48), &loaded, &loaded_logits).ok());
  EXPECT_TRUE(SameKv(one, loaded));
  EXPECT_TRUE(SameBits(one_logits, loaded_logits));
  // Token by token through DecodeStep (batches of one) as well.
  KvCache stepped(t.KvShapeFor(16));
  std::vector<float> step_logits;
  for (int32_t tok : prompt) {
    KvCache* c = &stepped;
    ASSERT_TRUE(t.DecodeStep(std::span(&c, 1), std::span(&tok, 1), &step_logits).ok());
  }
  EXPECT_TRUE(SameKv(one, stepped));
  EXPECT_TRUE(SameBits(one_logits, step_logits));
}

// `mooncake generate` (blocks of 16) and a job with other blocks must agree: the block size
// changes where a value is stored, never the value.
TEST_P(DeterminismTest, TheBlockSizeDoesNotChangeKvOrLogits) {
  const Transformer t = Model();
  const std::vector<int32_t> prompt = Prompt(100, 2);
  std::vector<float> l16, l12, l512;
  const KvCache c16 = Chunked(t, prompt, {37, 63}, 16, &l16);
  const KvCache c12 = Chunked(t, prompt, {100}, 12, &l12);
  const KvCache c512 = Chunked(t, prompt, {5, 95}, 512, &l512);
  EXPECT_TRUE(SameBits(l16, l12));
  EXPECT_TRUE(SameBits(l16, l512));
  const KvShape& a = c16.shape();
  const KvShape& b = c12.shape();
  for (int32_t layer = 0; layer < a.layers; ++layer) {
    for (int32_t kv = 0; kv < 2; ++kv) {
      for (int32_t head = 0; head < a.kv_heads; ++head) {
        for (int32_t d = 0; d < a.head_dim; ++d) {
          for (int32_t p = 0; p < 100; ++p) {
            const float x = c16.block(p / 16)[a.Index(layer, kv, head, d, p % 16)];
            const float y = c12.block(p / 12)[b.Index(layer, kv, head, d, p % 12)];
            ASSERT_EQ(std::memcmp(&x, &y, sizeof x), 0) << layer << kv << head << d << p;
          }
        }
      }
    }
  }
}

TEST_P(DeterminismTest, DecodeBatchCompositionDoesNotChangeARequestsLogits) {
  const Transformer t = Model();
  const int32_t vocab = t.config().vocab_size;
  // Four sequences of different lengths, each prefilled alone.
  std::vector<KvCache> alone, batched;
  for (int s = 0; s < 4; ++s) {
    std::vector<float> logits;
    alone.emplace_back(t.KvShapeFor(8));
    ASSERT_TRUE(t.Prefill(Prompt(5 + 9 * s, s), &alone.back(), &logits).ok());
  }
  batched = alone;
  std::vector<KvCache> mixed = alone;
  const std::vector<int32_t> next{3, 140, 77, 500};
  // Decode each alone, all four together, and in another order with two of them.
  std::vector<std::vector<float>> solo(4);
  for (int s = 0; s < 4; ++s) {
    KvCache* c = &alone[s];
    ASSERT_TRUE(t.DecodeStep(std::span(&c, 1), std::span(&next[s], 1), &solo[s]).ok());
  }
  std::vector<KvCache*> all{&batched[0], &batched[1], &batched[2], &batched[3]};
  std::vector<float> together;
  ASSERT_TRUE(t.DecodeStep(all, next, &together).ok());
  std::vector<KvCache*> pair{&mixed[3], &mixed[1]};
  const std::vector<int32_t> pair_tokens{next[3], next[1]};
  std::vector<float> two;
  ASSERT_TRUE(t.DecodeStep(pair, pair_tokens, &two).ok());
  for (int s = 0; s < 4; ++s) {
    EXPECT_TRUE(SameBits(solo[s], std::span(together).subspan(s * vocab, vocab))) << s;
    EXPECT_TRUE(SameKv(alone[s], batched[s])) << s;
  }
  EXPECT_TRUE(SameBits(solo[3], std::span(two).subspan(0, vocab)));
  EXPECT_TRUE(SameBits(solo[1], std::span(two).subspan(vocab, vocab)));
}

TEST(TransformerTest, SeedsAndPromptsChangeTheOutput) {
  const Transformer a = Tiny(1), b = Tiny(2);
  std::vector<float> la, lb, lc;
  KvCache ca(a.KvShapeFor(16)), cb(b.KvShapeFor(16)), cc(a.KvShapeFor(16));
  ASSERT_TRUE(a.Prefill(Prompt(10, 0), &ca, &la).ok());
  ASSERT_TRUE(b.Prefill(Prompt(10, 0), &cb, &lb).ok());
  ASSERT_TRUE(a.Prefill(Prompt(10, 1), &cc, &lc).ok());
  EXPECT_FALSE(SameBits(la, lb));
  EXPECT_FALSE(SameBits(la, lc));
  for (float v : la) ASSERT_TRUE(std::isfinite(v));
}

TEST(TransformerTest, BadInputsAreRefused) {
  const Transformer t = Tiny();
  std::vector<float> logits;
  KvCache cache(t.KvShapeFor(16));
  const std::vector<int32_t> bad{1, 512};
  EXPECT_EQ(t.Prefill(bad, &cache, &logits).code(), ErrorCode::kInvalidArgument);
  KvCache wrong(KvShape{3, 2, 16, 16});
  const std::vector<int32_t> ok{1};
  EXPECT_EQ(t.Prefill(ok, &wrong, &logits).code(), ErrorCode::kInvalidArgument);
  KvCache* twice[] = {&cache, &cache};
  const std::vector<int32_t> two{1, 2};
  EXPECT_EQ(t.DecodeStep(twice, two, &logits).code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace mooncake::model
