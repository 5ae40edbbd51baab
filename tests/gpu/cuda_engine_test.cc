// The reference transformer on a CUDA GPU (engine/cuda/cuda_kv_compute.h) against the CPU model,
// label gpu: every test skips, saying why, on a node without a usable GPU (CTest reports it
// skipped). (a) logits and KV blocks agree within 1e-3 of the largest value for prompts of
// several lengths, in one pass and chunked over a prefix loaded from the CPU's blocks; (b) greedy
// tokens equal model::Generate's, alone and in a decode batch; (c) blocks prefilled on the GPU
// continue on the CPU engine with generate's tokens, and the other way round.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>

#include "engine/cuda/cuda_kv_compute.h"
#include "engine/reference_engine.h"
#include "gpu/gpu.h"
#include "model/checkpoint.h"
#include "model/generate.h"
#include "model/trace_tokens.h"
#include "trace/trace_request.h"

namespace mooncake::engine {
namespace {

// MOONCAKE_GPU_TESTS_ON_CPU=1: the "GPU" is the CPU model, a check of these tests themselves
// (their chunking, block moves and batches) on a machine without a GPU (CTest
// gpu_tests_harness_on_cpu).
bool HarnessOnCpu() { return std::getenv("MOONCAKE_GPU_TESTS_ON_CPU") != nullptr; }

#define SKIP_WITHOUT_GPU()                                          \
  do {                                                              \
    const gpu::GpuInfo info_ = gpu::Probe();                        \
    if (info_.devices == 0 && !HarnessOnCpu()) {                    \
      GTEST_SKIP() << "needs a CUDA GPU: " << gpu::Describe(info_); \
    }                                                               \
  } while (0)

Result<std::unique_ptr<KvCompute>> DeviceCompute(const model::LoadedModel& m) {
  if (!HarnessOnCpu()) return CudaKvCompute(m);
  static std::deque<model::Transformer> models;  // outlive the computes that read them
  auto t = model::Transformer::Create(m);
  if (!t.ok()) return t.status();
  models.push_back(std::move(*t));
  return CpuKvCompute(models.back());
}

constexpr double kTolerance = 1e-3;  // of the largest absolute value compared

// The largest |a - b| over the largest |a|.
double RelativeError(std::span<const float> a, std::span<const float> b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0, scale = 1e-30;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    diff = std::max(diff, std::abs(double(a[i]) - b[i]));
    scale = std::max(scale, std::abs(double(a[i])));
  }
  return diff / scale;
}

// A wide head (160 dims: more than the attention kernel's 128 threads) and one kv head for two
// query heads, beside the presets.
model::LoadedModel Wide() {
  model::ModelConfig c;
  c.name = "wide";
  c.vocab_size = 300;
  c.hidden_size = 320;
  c.intermediate_size = 200;
  c.num_layers = 2;
  c.num_heads = 2;
  c.num_kv_heads = 1;
  c.head_dim = 160;
  c.rope_theta = 500000;
  c.tie_word_embeddings = true;
  return {c, model::SeededWeights(c, 5)};
}

model::LoadedModel Load(const std::string& name) {
  if (name == "wide") return Wide();
  auto m = model::LoadModel(name, 3);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return std::move(*m);
}

struct Pair {
  model::Transformer cpu;
  std::unique_ptr<KvCompute> gpu;
};
Pair Both(const std::string& name) {
  model::LoadedModel m = Load(name);
  auto gpu = DeviceCompute(m);
  EXPECT_TRUE(gpu.ok()) << gpu.status().ToString();
  auto cpu = model::Transformer::Create(std::move(m));
  EXPECT_TRUE(cpu.ok()) << cpu.status().ToString();
  return {std::move(*cpu), std::move(*gpu)};
}

std::vector<int32_t> Prompt(int64_t n, int32_t vocab, int32_t salt) {
  std::vector<int32_t> p;
  for (int64_t i = 0; i < n; ++i)
    p.push_back(static_cast<int32_t>((i * 37 + salt * 11 + 5) % vocab));
  return p;
}

std::vector<float> Block(const SequenceKv& kv, size_t b, const model::KvShape& shape) {
  std::vector<float> out(shape.BlockFloats());
  EXPECT_TRUE(kv.CopyBlockOut(b, out).ok());
  return out;
}

class CudaVsCpu : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaVsCpu, LogitsAndKvAgreeInOnePassAndChunkedOverALoadedPrefix) {
  SKIP_WITHOUT_GPU();
  Pair p = Both(GetParam());
  ASSERT_TRUE(p.gpu);
  const int32_t vocab = p.cpu.config().vocab_size;
  for (int32_t block_tokens : {16, 512}) {
    const model::KvShape shape = p.cpu.KvShapeFor(block_tokens);
    for (int64_t length : {1, 7, 37, 300}) {
      const std::vector<int32_t> prompt = Prompt(length, vocab, static_cast<int32_t>(length));
      model::KvCache cpu_kv(shape);
      std::vector<float> cpu_logits, gpu_logits;
      ASSERT_TRUE(p.cpu.Prefill(prompt, &cpu_kv, &cpu_logits).ok());
      std::unique_ptr<SequenceKv> gpu_kv = p.gpu->NewSequence(shape);
      ASSERT_TRUE(p.gpu->Prefill(prompt, gpu_kv.get(), &gpu_logits).ok());
      EXPECT_LE(RelativeError(cpu_logits, gpu_logits), kTolerance)
          << GetParam() << ", " << length << " tokens, blocks of " << block_tokens;
      ASSERT_EQ(gpu_kv->tokens(), length);
      for (size_t b = 0; b < cpu_kv.num_blocks(); ++b) {
        EXPECT_LE(RelativeError(cpu_kv.block(b), Block(*gpu_kv, b, shape)), kTolerance)
            << "block " << b << " of " << length << " tokens";
      }
    }
  }
  // A 100-token prompt, blocks of 16: the first two blocks computed by the CPU and appended on
  // the GPU (a prefix read back from a store), the rest in chunks of 30 and 38.
  const model::KvShape shape = p.cpu.KvShapeFor(16);
  const std::vector<int32_t> prompt = Prompt(100, vocab, 9);
  model::KvCache cpu_kv(shape);
  std::vector<float> cpu_logits, gpu_logits;
  ASSERT_TRUE(p.cpu.Prefill(prompt, &cpu_kv, &cpu_logits).ok());
  std::unique_ptr<SequenceKv> gpu_kv = p.gpu->NewSequence(shape);
  for (size_t b = 0; b < 2; ++b) ASSERT_TRUE(gpu_kv->AppendBlock(cpu_kv.block(b), 16).ok());
  ASSERT_TRUE(p.gpu->Prefill(std::span(prompt).subspan(32, 30), gpu_kv.get(), &gpu_logits).ok());
  ASSERT_TRUE(p.gpu->Prefill(std::span(prompt).subspan(62), gpu_kv.get(), &gpu_logits).ok());
  EXPECT_LE(RelativeError(cpu_logits, gpu_logits), kTolerance) << "chunked over a loaded prefix";
  for (size_t b = 2; b < cpu_kv.num_blocks(); ++b) {
    EXPECT_LE(RelativeError(cpu_kv.block(b), Block(*gpu_kv, b, shape)), kTolerance) << b;
  }
}

TEST_P(CudaVsCpu, GreedyTokensAreGeneratesAloneAndInABatch) {
  SKIP_WITHOUT_GPU();
  Pair p = Both(GetParam());
  ASSERT_TRUE(p.gpu);
  const int32_t vocab = p.cpu.config().vocab_size;
  constexpr int kTokens = 16;
  model::GenerateOptions options;
  options.max_tokens = kTokens;
  const model::KvShape shape = p.cpu.KvShapeFor(options.block_tokens);
  const std::vector<std::vector<int32_t>> prompts = {Prompt(3, vocab, 1), Prompt(29, vocab, 2),
                                                     Prompt(64, vocab, 3)};
  std::vector<std::unique_ptr<SequenceKv>> kvs;
  std::vector<std::vector<int32_t>> got(prompts.size());
  std::vector<float> logits;
  for (size_t i = 0; i < prompts.size(); ++i) {
    kvs.push_back(p.gpu->NewSequence(shape));
    ASSERT_TRUE(p.gpu->Prefill(prompts[i], kvs[i].get(), &logits).ok());
    got[i].push_back(model::Argmax(logits));
  }
  // The first prompt alone for three steps, then all three together.
  for (int step = 1; step < kTokens; ++step) {
    const size_t n = step < 4 ? 1 : prompts.size();
    std::vector<SequenceKv*> batch;
    std::vector<int32_t> tokens;
    for (size_t i = 0; i < n; ++i) {
      batch.push_back(kvs[i].get());
      tokens.push_back(got[i].back());
    }
    ASSERT_TRUE(p.gpu->DecodeStep(batch, tokens, &logits).ok());
    const size_t v = static_cast<size_t>(vocab);
    for (size_t k = 0; k < batch.size(); ++k) {
      got[k].push_back(model::Argmax(std::span(logits).subspan(k * v, v)));
    }
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    options.max_tokens = static_cast<int64_t>(got[i].size());
    auto want = model::Generate(p.cpu, prompts[i], options);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(want->output_ids, got[i]) << GetParam() << ", prompt " << i;
  }
}

// The layer callback (KvCompute::Prefill's on_layer) on the device: once per layer, in order,
// with that layer's KV of the chunk there (the CPU's within the tolerance) and the later layers
// of the chunk's fresh blocks not computed yet (zero).
TEST_P(CudaVsCpu, EachLayerIsHandedOverWithItsKvBeforeTheNextIsComputed) {
  SKIP_WITHOUT_GPU();
  Pair p = Both(GetParam());
  ASSERT_TRUE(p.gpu);
  const model::KvShape shape = p.cpu.KvShapeFor(16);
  const size_t lf = shape.LayerFloats();
  const std::vector<int32_t> prompt = Prompt(100, p.cpu.config().vocab_size, 4);
  model::KvCache cpu_kv(shape);
  std::vector<float> logits;
  ASSERT_TRUE(p.cpu.Prefill(prompt, &cpu_kv, &logits).ok());
  // 40 tokens, then 60: block 2 is finished by the second chunk, blocks 3 to 6 are new in it.
  std::unique_ptr<SequenceKv> kv = p.gpu->NewSequence(shape);
  ASSERT_TRUE(p.gpu->Prefill(std::span(prompt).first(40), kv.get(), &logits).ok());
  std::vector<int32_t> seen;
  std::vector<float> piece(lf);
  auto on_layer = [&](int32_t layer) -> Status {
    seen.push_back(layer);
    for (size_t b = 2; b < 7; ++b) {
      EXPECT_TRUE(kv->CopyLayerOut(b, layer, piece).ok());
      EXPECT_LE(RelativeError(cpu_kv.block(b).subspan(layer * lf, lf), piece), kTolerance)
          << GetParam() << ": layer " << layer << " of block " << b;
      const std::vector<float> block = Block(*kv, b, shape);
      EXPECT_TRUE(b == 2 || std::all_of(block.begin() + (layer + 1) * lf, block.end(),
                                        [](float x) { return x == 0.0f; }))
          << GetParam() << ": block " << b << " has layers after " << layer << " already";
    }
    return Status::Ok();
  };
  ASSERT_TRUE(p.gpu->Prefill(std::span(prompt).subspan(40), kv.get(), &logits, on_layer).ok());
  EXPECT_EQ(seen.size(), static_cast<size_t>(p.cpu.config().num_layers));
  for (size_t l = 0; l < seen.size(); ++l) EXPECT_EQ(seen[l], static_cast<int32_t>(l));
}

INSTANTIATE_TEST_SUITE_P(Models, CudaVsCpu, ::testing::Values("tiny", "mini", "wide"));

// Prefills `prompt` through `e` in one chunk into `kv` (its blocks of the job's size); returns
// the first token.
int32_t PrefillAll(Engine& e, const std::vector<uint64_t>& hash_ids, int64_t input_length,
                   std::vector<std::byte>& kv) {
  PrefillChunk c{
      1, hash_ids, input_length, 0, input_length, 0, static_cast<int>(hash_ids.size()), kv, {}, {}};
  PrefillResult r = e.Prefill(c);
  EXPECT_TRUE(r.error.empty()) << r.error;
  return r.next_token;
}

std::vector<int32_t> Continue(Engine& e, std::span<const std::byte> kv, int64_t input_length,
                              int32_t first, int tokens) {
  std::vector<int32_t> out{first};
  const Status s = e.StartDecode(7, kv, input_length, first);
  EXPECT_TRUE(s.ok()) << s.ToString();
  for (int i = 1; i < tokens; ++i) {
    DecodeStep step = e.Decode(std::vector<DecodeSeq>{{7, 0}});
    EXPECT_TRUE(step.error.empty()) << step.error;
    if (!step.error.empty()) break;
    out.push_back(step.next_tokens.at(0));
  }
  e.EndDecode(7);
  return out;
}

TEST(CudaEngine, BlocksPrefilledOnOneDeviceContinueOnTheOther) {
  SKIP_WITHOUT_GPU();
  model::LoadedModel m = Load("tiny");
  auto gpu_compute = DeviceCompute(m);
  ASSERT_TRUE(gpu_compute.ok()) << gpu_compute.status().ToString();
  auto cpu_model = model::Transformer::Create(std::move(m));
  ASSERT_TRUE(cpu_model.ok());
  ReferenceEngine cpu(*cpu_model), gpu(std::move(*gpu_compute));
  EXPECT_EQ(cpu.block_bytes(), gpu.block_bytes());
  const std::vector<uint64_t> hash_ids = {41, 42};
  const int64_t input_length = trace::kTraceBlockTokens + 100;
  constexpr int kTokens = 12;
  std::vector<BlockHash> ids{BlockHash{41}, BlockHash{42}};
  auto prompt = model::PromptTokens(ids, input_length, trace::kTraceBlockTokens,
                                    cpu_model->config().vocab_size);
  ASSERT_TRUE(prompt.ok());
  model::GenerateOptions options;
  options.max_tokens = kTokens;
  const std::vector<int32_t> want = model::Generate(*cpu_model, *prompt, options)->output_ids;

  std::vector<std::byte> from_gpu(hash_ids.size() * gpu.block_bytes());
  const int32_t gpu_first = PrefillAll(gpu, hash_ids, input_length, from_gpu);
  EXPECT_EQ(Continue(cpu, from_gpu, input_length, gpu_first, kTokens), want) << "GPU -> CPU";
  std::vector<std::byte> from_cpu(from_gpu.size());
  const int32_t cpu_first = PrefillAll(cpu, hash_ids, input_length, from_cpu);
  EXPECT_EQ(Continue(gpu, from_cpu, input_length, cpu_first, kTokens), want) << "CPU -> GPU";
}

}  // namespace
}  // namespace mooncake::engine
