// The reference transformer behind the Engine seam (engine/reference_engine.h), as the serving
// roles drive it: a prompt prefilled in chunks, or over a prefix whose blocks are handed over as
// bytes (read back from a store), gives the blocks and the first token of one pass; a decode
// instance that starts from the prefill's blocks generates generate()'s tokens, whatever the
// rest of its batch.
#include "engine/reference_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "model/checkpoint.h"
#include "model/generate.h"
#include "model/trace_tokens.h"
#include "serve/token_check.h"
#include "trace/trace_request.h"

namespace mooncake::engine {
namespace {

constexpr int kBlock = trace::kTraceBlockTokens;

model::Transformer Tiny() {
  auto m = model::LoadModel("tiny", 3);
  EXPECT_TRUE(m.ok());
  auto t = model::Transformer::Create(std::move(*m));
  EXPECT_TRUE(t.ok());
  return std::move(*t);
}

struct Request {
  uint64_t id;
  std::vector<uint64_t> hash_ids;
  int64_t input_length;
};

std::vector<int32_t> PromptOf(const model::Transformer& t, const Request& r) {
  std::vector<BlockHash> ids;
  for (uint64_t h : r.hash_ids) ids.push_back(BlockHash{h});
  return *model::PromptTokens(ids, r.input_length, kBlock, t.config().vocab_size);
}

// Prefills `r` through the engine in chunks of `chunk` tokens after `prefix` tokens whose KV is
// already in `kv`; returns the first token.
int32_t Prefill(ReferenceEngine& e, const Request& r, std::vector<std::byte>& kv, int64_t prefix,
                int64_t chunk) {
  const int blocks = static_cast<int>(r.hash_ids.size());
  int32_t first = kNoToken;
  int stored = static_cast<int>(prefix / kBlock);
  for (int64_t done = prefix; done < r.input_length;) {
    const int64_t end = std::min(r.input_length, done + chunk);
    const int complete = end == r.input_length ? blocks : static_cast<int>(end / kBlock);
    PrefillChunk c{r.id, r.hash_ids, r.input_length, done, end - done, stored, complete, kv,
                   {},   {}};
    PrefillResult res = e.Prefill(c);
    EXPECT_TRUE(res.error.empty()) << res.error;
    EXPECT_FALSE(res.time.modelled);
    if (res.next_token != kNoToken) first = res.next_token;
    stored = std::max(stored, complete);
    done = end;
  }
  return first;
}

TEST(ReferenceEngine, ChunkedAndLoadedPrefixesGiveOnePassesBlocksAndFirstToken) {
  const model::Transformer t = Tiny();
  ReferenceEngine e(t);
  const Request r{1, {11, 12, 13}, 3 * kBlock - 100};
  std::vector<std::byte> one(3 * e.block_bytes()), chunked(one.size()), loaded(one.size());
  const int32_t first = Prefill(e, r, one, 0, r.input_length);
  EXPECT_EQ(Prefill(e, r, chunked, 0, 300), first);
  EXPECT_EQ(one, chunked);
  // The first two blocks come from "the store" (bytes of the one-pass run); the rest is computed.
  std::memcpy(loaded.data(), one.data(), 2 * e.block_bytes());
  EXPECT_EQ(Prefill(e, r, loaded, 2 * kBlock, 1000), first);
  EXPECT_EQ(one, loaded);

  model::GenerateOptions g;
  g.max_tokens = 1;
  EXPECT_EQ(model::Generate(t, PromptOf(t, r), g)->output_ids.at(0), first);
}

TEST(ReferenceEngine, DecodeFromTheReceivedBlocksGivesGeneratesTokensInAnyBatch) {
  const model::Transformer t = Tiny();
  ReferenceEngine prefill(t), decode(t);
  const std::vector<Request> requests = {
      {1, {21, 22}, kBlock + 40}, {2, {21, 23}, 2 * kBlock}, {3, {24}, 7}};
  constexpr int kTokens = 6;
  std::vector<std::vector<int32_t>> got(requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    std::vector<std::byte> kv(requests[i].hash_ids.size() * prefill.block_bytes());
    const int32_t first = Prefill(prefill, requests[i], kv, 0, 256);
    ASSERT_TRUE(decode.StartDecode(requests[i].id, kv, requests[i].input_length, first).ok());
    got[i].push_back(first);
  }
  // Request 3 joins a step later and leaves first: batches of 2, 3, then 2.
  for (int step = 1; step < kTokens; ++step) {
    std::vector<DecodeSeq> batch;
    for (size_t i = 0; i < requests.size(); ++i) {
      const bool in = i != 2 || (step >= 2 && step < 4);
      if (in) batch.push_back({requests[i].id, 0});
    }
    DecodeStep s = decode.Decode(batch);
    ASSERT_TRUE(s.error.empty()) << s.error;
    for (size_t k = 0; k < batch.size(); ++k) got[batch[k].request - 1].push_back(s.next_tokens[k]);
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    model::GenerateOptions g;
    g.max_tokens = static_cast<int64_t>(got[i].size());
    EXPECT_EQ(model::Generate(t, PromptOf(t, requests[i]), g)->output_ids, got[i])
        << "request " << requests[i].id;
  }
  decode.EndDecode(1);
  EXPECT_NE(decode.Decode(std::vector<DecodeSeq>{{1, 0}}).error.find("never started"),
            std::string::npos);
}

// The layer callback's contract on the CPU compute: once per layer, in order, when that layer's
// KV of the chunk is final (a one-pass block's piece) and the later layers are not computed yet
// (their pieces of the chunk's fresh blocks still zero). Fails if the callback comes after the
// pass, or before a layer's KV is stored.
TEST(KvCompute, EachLayerIsReadyBeforeTheNextIsComputed) {
  const model::Transformer t = Tiny();
  const std::unique_ptr<KvCompute> compute = CpuKvCompute(t);
  const model::KvShape shape = t.KvShapeFor(16);
  const size_t lf = shape.LayerFloats();
  const Request r{1, {11}, 100};
  const std::vector<int32_t> prompt = PromptOf(t, r);  // blocks of 16 below: 7 blocks
  std::unique_ptr<SequenceKv> one = compute->NewSequence(shape);
  std::vector<float> logits;
  ASSERT_TRUE(compute->Prefill(prompt, one.get(), &logits).ok());
  std::vector<float> want(shape.BlockFloats()), got(shape.BlockFloats()), piece(lf);
  // 40 tokens, then 60 in one chunk: block 2 is finished by it, blocks 3 to 6 are new in it.
  std::unique_ptr<SequenceKv> kv = compute->NewSequence(shape);
  ASSERT_TRUE(compute->Prefill(std::span(prompt).first(40), kv.get(), &logits).ok());
  std::vector<int32_t> seen;
  auto on_layer = [&](int32_t layer) -> Status {
    seen.push_back(layer);
    for (size_t b = 2; b < 7; ++b) {
      EXPECT_TRUE(one->CopyBlockOut(b, want).ok());
      EXPECT_TRUE(kv->CopyBlockOut(b, got).ok());
      EXPECT_TRUE(kv->CopyLayerOut(b, layer, piece).ok());
      EXPECT_TRUE(std::equal(piece.begin(), piece.end(), want.begin() + layer * lf))
          << "layer " << layer << " of block " << b << " is not final when handed over";
      EXPECT_TRUE(b == 2 || std::all_of(got.begin() + (layer + 1) * lf, got.end(),
                                        [](float x) { return x == 0.0f; }))
          << "block " << b << ": layers after " << layer << " computed before it was handed over";
    }
    return Status::Ok();
  };
  ASSERT_TRUE(compute->Prefill(std::span(prompt).subspan(40), kv.get(), &logits, on_layer).ok());
  std::vector<int32_t> every(t.config().num_layers);
  for (size_t l = 0; l < every.size(); ++l) every[l] = static_cast<int32_t>(l);
  EXPECT_EQ(seen, every);
  // A callback's error stops the pass.
  std::unique_ptr<SequenceKv> failing = compute->NewSequence(shape);
  EXPECT_EQ(compute
                ->Prefill(prompt, failing.get(), &logits,
                          [](int32_t) { return Status(ErrorCode::kInternal, "stop"); })
                .code(),
            ErrorCode::kInternal);
}

// Through the Engine seam: a chunk's finished blocks are handed over layer by layer (each
// layer's piece already in `kv` when its callback comes, the later ones not yet), and the bytes
// are the one-pass blocks; chunks without a finished block call nothing.
TEST(ReferenceEngine, ChunksHandTheirFinishedBlocksOverLayerByLayer) {
  const model::Transformer t = Tiny();
  ReferenceEngine e(t);
  const Request r{1, {11, 12, 13}, 3 * kBlock - 100};
  const uint64_t bb = e.block_bytes();
  const size_t piece = bb / t.config().num_layers;
  std::vector<std::byte> one(3 * bb), layered(one.size());
  const int32_t first = Prefill(e, r, one, 0, r.input_length);
  int stored = 0;
  std::vector<std::pair<int, int32_t>> calls;  // (chunk, layer)
  int chunk_index = 0;
  for (int64_t done = 0; done < r.input_length; ++chunk_index) {
    const int64_t end = std::min<int64_t>(r.input_length, done + 300);
    const int complete = end == r.input_length ? 3 : static_cast<int>(end / kBlock);
    PrefillChunk c{r.id,
                   r.hash_ids,
                   r.input_length,
                   done,
                   end - done,
                   stored,
                   std::max(stored, complete),
                   layered,
                   {},
                   {}};
    c.on_layer = [&, from = stored, to = std::max(stored, complete)](int32_t layer) {
      calls.push_back({chunk_index, layer});
      for (int b = from; b < to; ++b) {
        const std::byte* at = layered.data() + b * bb;
        EXPECT_EQ(std::memcmp(at + layer * piece, one.data() + b * bb + layer * piece, piece), 0)
            << "layer " << layer << " of block " << b << " not in kv when handed over";
        EXPECT_TRUE(std::all_of(at + (layer + 1) * piece, at + bb,
                                [](std::byte x) { return x == std::byte{0}; }))
            << "block " << b << ": a later layer than " << layer << " was written already";
      }
    };
    PrefillResult res = e.Prefill(c);
    ASSERT_TRUE(res.error.empty()) << res.error;
    if (end == r.input_length) {
      EXPECT_EQ(res.next_token, first);
    }
    stored = std::max(stored, complete);
    done = end;
  }
  EXPECT_EQ(layered, one);
  // Chunks 0 and 2 ([0, 300), [600, 900)) finish no block; 1, 3 and 4 finish blocks 0, 1, 2.
  const std::vector<std::pair<int, int32_t>> want = {{1, 0}, {1, 1}, {3, 0},
                                                     {3, 1}, {4, 0}, {4, 1}};
  EXPECT_EQ(calls, want);
}

TEST(ReferenceEngine, BadBlocksAndTokensAreErrorsNotCrashes) {
  const model::Transformer t = Tiny();
  ReferenceEngine e(t);
  std::vector<std::byte> short_kv(e.block_bytes());
  EXPECT_EQ(e.StartDecode(1, short_kv, kBlock + 1, 0).code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(e.StartDecode(1, short_kv, 10, t.config().vocab_size).code(),
            ErrorCode::kInvalidArgument);
  const std::vector<uint64_t> one_id = {5};
  PrefillChunk c{9, one_id, 2 * kBlock, 0, 10, 0, 0, short_kv, {}, {}};  // 1 hash id for 2 blocks
  EXPECT_FALSE(e.Prefill(c).error.empty());
}

// The check the job reports as token_mismatches: a token that differs, or a missing one, counts.
TEST(ReferenceTokens, ADifferentTokenIsAMismatchNamingTheRequestAndPosition) {
  const model::Transformer t = Tiny();
  std::vector<trace::TraceRequest> requests(2);
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].id = RequestId{i};
    requests[i].input_length = 30 + static_cast<int32_t>(i);
    requests[i].output_length = 4;
    requests[i].hash_ids = {BlockHash{100 + i}};
  }
  serve::ReferenceTokens reference(t, requests);
  std::vector<trace::RequestRecord> records(2);
  std::vector<std::vector<int32_t>> outputs(2);
  for (size_t i = 0; i < 2; ++i) {
    records[i].outcome = trace::Outcome::kCompleted;
    model::GenerateOptions g;
    g.max_tokens = 4;
    std::vector<BlockHash> ids = requests[i].hash_ids;
    outputs[i] =
        model::Generate(
            t, *model::PromptTokens(ids, requests[i].input_length, kBlock, t.config().vocab_size),
            g)
            ->output_ids;
  }
  auto same = reference.Compare(records, outputs);
  EXPECT_EQ(same.requests_compared, 2u);
  EXPECT_EQ(same.token_mismatches, 0u);
  outputs[1][2] = (outputs[1][2] + 1) % t.config().vocab_size;
  auto differ = reference.Compare(records, outputs);
  EXPECT_EQ(differ.token_mismatches, 1u);
  EXPECT_NE(differ.first_mismatch.find("request 1: token 2"), std::string::npos)
      << differ.first_mismatch;
}

}  // namespace
}  // namespace mooncake::engine
