// POST /v1/completions' body and prompt blocks (serve/completions.h): fields are checked one by
// one with errors naming them, equal prefixes give equal block hash ids and anything else
// different ones, and a client's tokens stop after the end-of-sequence token unless ignore_eos.
#include "serve/completions.h"

#include <gtest/gtest.h>

#include <numeric>

namespace mooncake::serve {
namespace {

CompletionLimits Limits() {
  CompletionLimits l;
  l.vocab_size = 100;
  l.max_prompt_tokens = 10;
  l.max_tokens = 32;
  return l;
}

TEST(Completions, AGoodBodyIsTakenWithItsDefaults) {
  auto r = ParseCompletionRequest(R"({"prompt": [1, 2, 99], "model": "m"})", Limits());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->prompt_ids, (std::vector<int32_t>{1, 2, 99}));
  EXPECT_EQ(r->max_tokens, 16);
  EXPECT_FALSE(r->stream);
  EXPECT_FALSE(r->ignore_eos);
  r = ParseCompletionRequest(
      R"({"prompt": [5], "max_tokens": 32, "temperature": 0, "n": 1, "stream": true,
          "ignore_eos": true, "top_p": 1})",
      Limits());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->max_tokens, 32);
  EXPECT_TRUE(r->stream);
  EXPECT_TRUE(r->ignore_eos);
}

TEST(Completions, EachBadFieldIsRefusedByName) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"prompt": [1)", "not valid JSON"},
      {R"([1])", "JSON object"},
      {R"({})", "prompt is missing"},
      {R"({"prompt": "hi"})", "no tokenizer"},
      {R"({"prompt": []})", "prompt is empty"},
      {R"({"prompt": [[1, 2]]})", "batch"},
      {R"({"prompt": [1, 1.5]})", "prompt[1]"},
      {R"({"prompt": [1, 100]})", "vocabulary"},
      {R"({"prompt": [-1]})", "vocabulary"},
      {R"({"prompt": [1,2,3,4,5,6,7,8,9,10,11]})", "more than the 10"},
      {R"({"prompt": [1], "max_tokens": 0})", "max_tokens = 0"},
      {R"({"prompt": [1], "max_tokens": -2})", "max_tokens = -2"},
      {R"({"prompt": [1], "max_tokens": 33})", "max_tokens = 33"},
      {R"({"prompt": [1], "max_tokens": "4"})", "max_tokens must be an integer"},
      {R"({"prompt": [1], "temperature": 0.5})", "temperature"},
      {R"({"prompt": [1], "temperature": "0"})", "temperature must be a number"},
      {R"({"prompt": [1], "n": 2})", "n = 2"},
      {R"({"prompt": [1], "stream": 1})", "stream must be"},
      {R"({"prompt": [1], "ignore_eos": "no"})", "ignore_eos must be"},
      {R"({"prompt": [1], "model": 3})", "model must be a string"},
  };
  for (const auto& [body, says] : cases) {
    auto r = ParseCompletionRequest(body, Limits());
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << body;
    EXPECT_NE(r.status().message().find(says), std::string::npos)
        << body << " -> " << r.status().message();
  }
}

TEST(Completions, BlockHashesShareEqualPrefixesOnly) {
  std::vector<int32_t> a(1300);
  std::iota(a.begin(), a.end(), 0);
  std::vector<int32_t> b = a;
  b[1100] = 7;  // differs in the third block only
  const auto ha = PromptBlockHashes(a, 512), hb = PromptBlockHashes(b, 512);
  ASSERT_EQ(ha.size(), 3u);
  EXPECT_EQ(ha[0], hb[0]);
  EXPECT_EQ(ha[1], hb[1]);
  EXPECT_NE(ha[2], hb[2]);
  std::vector<int32_t> c = a;
  c[3] = 9;  // a change in the first block changes every block after it (the chain)
  const auto hc = PromptBlockHashes(c, 512);
  for (size_t i = 0; i < 3; ++i) EXPECT_NE(ha[i], hc[i]);
  // A partial block differs from the whole one that extends it.
  const auto shorter = PromptBlockHashes(std::span(a).first(1100), 512);
  EXPECT_NE(shorter[2], ha[2]);
  for (BlockHash h : ha) EXPECT_NE(h.value >> 63, 0u);  // never a trace's hash id
}

TEST(Completions, TokensStopAfterEndOfSequenceUnlessIgnored) {
  std::string why;
  EXPECT_EQ(ClientTokens({5, 2, 7}, false, 2, &why), (std::vector<int32_t>{5, 2}));
  EXPECT_EQ(why, "stop");
  EXPECT_EQ(ClientTokens({5, 2, 7}, true, 2, &why), (std::vector<int32_t>{5, 2, 7}));
  EXPECT_EQ(why, "length");
}

}  // namespace
}  // namespace mooncake::serve
