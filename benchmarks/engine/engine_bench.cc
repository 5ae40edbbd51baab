// engine_bench: the reference model's speed (src/model) beside what this machine allows, for
// benchmarks/engine_speed.sh. For one preset it measures, in one process and one thread:
//   - prefill tokens/s of one chunk from an empty cache, and the model's matmul FLOPs per chunk
//     (linear layers + attention's QK^T and PV; the output head runs for the last token only);
//   - BLIS's own sgemm GFLOP/s (default settings, small-matrix path allowed) at the chunk's
//     linear-layer shapes, weighted by their FLOPs;
//   - the time of one decode step over a batch at a context, the bytes it must read (all weights,
//     output head included, plus the batch's KV) and memcpy bandwidth (bytes read + written);
// and writes the weights as an F32 checkpoint (config.json, model.safetensors) with the logits
// after a fixed prompt, so that the script's PyTorch model loads the same weights and checks
// its logits against ours. One JSON object on stdout; medians of --reps runs.
#include <blis.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/checkpoint.h"
#include "model/matmul.h"
#include "model/transformer.h"
#include "trace/trace_request.h"

namespace {

using mooncake::model::KvCache;
using mooncake::model::LoadedModel;
using mooncake::model::ModelConfig;
using mooncake::model::Transformer;
// The measuring thread's CPU time, not wall time: on a machine shared by several builds (load
// 10 and more on 2 cores) wall time is mostly waiting for a core, CPU time is the work. Every
// measurement here and in the PyTorch half (time.thread_time) is on one thread.
struct Clock {
  using time_point = double;
  static double now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  }
};

double Seconds(double a, double b) { return b - a; }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Options {
  std::string model = "small";
  uint64_t seed = 0;
  int64_t chunk = 2048;
  int32_t batch = 8;
  int64_t context = 512;
  int32_t steps = 8;
  int32_t reps = 3;
  int32_t block = mooncake::trace::kTraceBlockTokens;  // the KV block of a live run
  std::string checkpoint;                              // folder to write; empty: none
};

[[noreturn]] void Usage(const std::string& why) {
  std::cerr << "engine_bench: " << why << "\n"
            << "usage: engine_bench [--model PRESET] [--seed N] [--chunk T] [--batch B]\n"
               "                    [--context L] [--steps S] [--reps R] [--block T]\n"
               "                    [--checkpoint DIR]\n"
               "  --block T: tokens per KV block (default 512, a live run's)\n";
  std::exit(2);
}

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) Usage(a + " needs a value");
    std::string v = argv[++i];
    try {
      if (a == "--model")
        o.model = v;
      else if (a == "--seed")
        o.seed = std::stoull(v);
      else if (a == "--chunk")
        o.chunk = std::stoll(v);
      else if (a == "--batch")
        o.batch = std::stoi(v);
      else if (a == "--context")
        o.context = std::stoll(v);
      else if (a == "--steps")
        o.steps = std::stoi(v);
      else if (a == "--reps")
        o.reps = std::stoi(v);
      else if (a == "--block")
        o.block = std::stoi(v);
      else if (a == "--checkpoint")
        o.checkpoint = v;
      else
        Usage("unknown option " + a);
    } catch (const std::exception&) {
      Usage("bad value for " + a + ": " + v);
    }
  }
  if (o.chunk < 1 || o.batch < 1 || o.context < 1 || o.steps < 1 || o.reps < 1 || o.block < 1)
    Usage("sizes must be positive");
  return o;
}

int32_t QDim(const ModelConfig& c) { return c.num_heads * c.head_dim; }
int32_t KvDim(const ModelConfig& c) { return c.num_kv_heads * c.head_dim; }

struct Shape {
  int64_t in, out;
};
// The linear layers of one transformer layer, nn.Linear [out, in].
std::vector<Shape> LayerShapes(const ModelConfig& c) {
  int64_t h = c.hidden_size, i = c.intermediate_size;
  return {{h, QDim(c)}, {h, KvDim(c)}, {h, KvDim(c)}, {QDim(c), h}, {h, i}, {h, i}, {i, h}};
}

std::vector<int32_t> Tokens(int64_t n, int32_t vocab, uint64_t salt) {
  std::vector<int32_t> t(n);
  for (int64_t j = 0; j < n; ++j) t[j] = int32_t((uint64_t(j) * 2654435761u + salt) % vocab);
  return t;
}

// BLIS's own sgemm (default runtime: its sup path may take small shapes), y = x W^T.
double SgemmGflops(const ModelConfig& c, int64_t rows, int32_t reps) {
  double flops = 0, seconds = 0;
  for (const Shape& s : LayerShapes(c)) {
    std::vector<float> x(rows * s.in, 0.5f), w(s.out * s.in, 0.25f), y(rows * s.out);
    float alpha = 1, beta = 0;
    std::vector<double> t;
    for (int r = 0; r < reps + 1; ++r) {  // the first run warms up
      auto a = Clock::now();
      bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, rows, s.out, s.in, &alpha, x.data(), s.in, 1,
                w.data(), 1, s.in, &beta, y.data(), s.out, 1);
      if (r > 0) t.push_back(Seconds(a, Clock::now()));
    }
    flops += 2.0 * rows * s.in * s.out;
    seconds += Median(t);
  }
  return flops / seconds / 1e9;
}

// memcpy between two 256 MiB buffers, bytes read + written per second.
double MemcpyGBs(int32_t reps) {
  const size_t n = size_t(256) << 20;
  std::vector<char> a(n, 1), b(n, 2);
  std::vector<double> t;
  for (int r = 0; r < reps + 1; ++r) {
    auto s = Clock::now();
    std::memcpy(r % 2 ? a.data() : b.data(), r % 2 ? b.data() : a.data(), n);
    if (r > 0) t.push_back(Seconds(s, Clock::now()));
  }
  return 2.0 * double(n) / Median(t) / 1e9;
}

void WriteCheckpoint(const LoadedModel& m, const std::string& dir) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  const ModelConfig& c = m.config;
  nlohmann::json cfg = {{"architectures", {"LlamaForCausalLM"}},
                        {"model_type", "llama"},
                        {"hidden_act", "silu"},
                        {"vocab_size", c.vocab_size},
                        {"hidden_size", c.hidden_size},
                        {"intermediate_size", c.intermediate_size},
                        {"num_hidden_layers", c.num_layers},
                        {"num_attention_heads", c.num_heads},
                        {"num_key_value_heads", c.num_kv_heads},
                        {"head_dim", c.head_dim},
                        {"rms_norm_eps", c.rms_norm_eps},
                        {"rope_theta", c.rope_theta},
                        {"tie_word_embeddings", c.tie_word_embeddings},
                        {"bos_token_id", c.bos_token_id},
                        {"eos_token_id", c.eos_token_id},
                        {"torch_dtype", "float32"}};
  std::ofstream(dir + "/config.json") << cfg.dump(2) << "\n";
  std::vector<std::pair<std::string, std::pair<const std::vector<float>*, std::vector<int64_t>>>>
      tensors;
  auto add = [&](std::string name, const std::vector<float>& v, std::vector<int64_t> shape) {
    tensors.push_back({std::move(name), {&v, std::move(shape)}});
  };
  const auto& w = m.weights;
  int64_t h = c.hidden_size, i = c.intermediate_size, q = QDim(c), kv = KvDim(c);
  add("model.embed_tokens.weight", w.embed, {c.vocab_size, h});
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const auto& L = w.layers[l];
    std::string p = "model.layers." + std::to_string(l) + ".";
    add(p + "input_layernorm.weight", L.input_norm, {h});
    add(p + "self_attn.q_proj.weight", L.q, {q, h});
    add(p + "self_attn.k_proj.weight", L.k, {kv, h});
    add(p + "self_attn.v_proj.weight", L.v, {kv, h});
    add(p + "self_attn.o_proj.weight", L.o, {h, q});
    add(p + "post_attention_layernorm.weight", L.post_norm, {h});
    add(p + "mlp.gate_proj.weight", L.gate, {i, h});
    add(p + "mlp.up_proj.weight", L.up, {i, h});
    add(p + "mlp.down_proj.weight", L.down, {h, i});
  }
  add("model.norm.weight", w.final_norm, {h});
  if (!c.tie_word_embeddings) add("lm_head.weight", w.lm_head, {c.vocab_size, h});
  nlohmann::json header = nlohmann::json::object();
  size_t offset = 0;
  for (const auto& [name, t] : tensors) {
    size_t bytes = t.first->size() * sizeof(float);
    header[name] = {
        {"dtype", "F32"}, {"shape", t.second}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  while (text.size() % 8) text += ' ';
  std::ofstream f(dir + "/model.safetensors", std::ios::binary);
  uint64_t len = text.size();  // little-endian on every machine this runs on
  f.write(reinterpret_cast<const char*>(&len), 8);
  f << text;
  for (const auto& [name, t] : tensors)
    f.write(reinterpret_cast<const char*>(t.first->data()), t.first->size() * sizeof(float));
}

}  // namespace

int main(int argc, char** argv) {
  Options o = Parse(argc, argv);
  mooncake::model::ChooseMatmulKernels();  // the sgemm baseline runs the model's kernels
  bli_init();  // before MatmulBackend() asks BLIS for its kernel configuration
  auto loaded = mooncake::model::LoadModel(o.model, o.seed);
  if (!loaded.ok()) {
    std::cerr << "engine_bench: " << loaded.status().ToString() << "\n";
    return 2;
  }
  if (!o.checkpoint.empty()) WriteCheckpoint(loaded.value(), o.checkpoint);
  auto created = Transformer::Create(loaded.value());
  if (!created.ok()) {
    std::cerr << "engine_bench: " << created.status().ToString() << "\n";
    return 1;
  }
  const Transformer& model = created.value();
  const ModelConfig& c = model.config();
  auto shape = model.KvShapeFor(o.block);
  nlohmann::json out = {{"model", o.model}, {"backend", mooncake::model::MatmulBackend()}};

  // The logits after a fixed prompt, for the PyTorch check.
  std::vector<float> logits;
  {
    KvCache cache(shape);
    auto prompt = Tokens(37, c.vocab_size, 7);
    if (!model.Prefill(prompt, &cache, &logits).ok()) return 1;
    out["check_prompt"] = prompt;
    out["check_logits"] = logits;
  }

  // Prefill: one chunk from an empty cache.
  auto chunk = Tokens(o.chunk, c.vocab_size, 11);
  std::vector<double> t;
  for (int r = 0; r < o.reps; ++r) {
    KvCache cache(shape);
    auto a = Clock::now();
    if (!model.Prefill(chunk, &cache, &logits).ok()) return 1;
    t.push_back(Seconds(a, Clock::now()));
  }
  double linear_flops = 0;
  for (const Shape& s : LayerShapes(c)) linear_flops += 2.0 * s.in * s.out;
  linear_flops *= double(c.num_layers) * double(o.chunk);
  // QK^T and PV for every query against its causal prefix: T (T + 1) / 2 pairs.
  double attention_flops = 4.0 * QDim(c) * c.num_layers * double(o.chunk) * (o.chunk + 1) / 2;
  double head_flops = 2.0 * c.hidden_size * c.vocab_size;
  double prefill_s = Median(t);
  out["prefill"] = {{"chunk", o.chunk},
                    {"seconds", prefill_s},
                    {"tokens_per_s", o.chunk / prefill_s},
                    {"gflop", (linear_flops + attention_flops + head_flops) / 1e9},
                    {"attention_gflop", attention_flops / 1e9},
                    {"gflops", (linear_flops + attention_flops + head_flops) / prefill_s / 1e9}};
  out["sgemm_gflops"] = SgemmGflops(c, o.chunk, o.reps);

  // Decode: a batch whose sequences hold `context` tokens, `steps` steps per rep.
  std::vector<KvCache> caches;
  std::vector<float> scratch;
  for (int32_t b = 0; b < o.batch; ++b) {
    caches.emplace_back(shape);
    if (!model.Prefill(Tokens(o.context, c.vocab_size, 100 + b), &caches.back(), &scratch).ok())
      return 1;
  }
  std::vector<KvCache*> ptrs;
  for (auto& k : caches) ptrs.push_back(&k);
  std::vector<int32_t> next(o.batch, 3);
  t.clear();
  for (int r = 0; r < o.reps; ++r) {
    for (int s = 0; s < o.steps; ++s) {
      auto a = Clock::now();
      if (!model.DecodeStep(ptrs, next, &logits).ok()) return 1;
      t.push_back(Seconds(a, Clock::now()));
    }
  }
  double step_s = Median(t);
  // Every weight is read once per step; of the embedding only the batch's rows (negligible)
  // unless it is also the output head, which is read whole.
  double weight_bytes = 4.0 * double(c.ParameterCount()) -
                        (c.tie_word_embeddings ? 0.0 : 4.0 * c.vocab_size * c.hidden_size);
  double mid_context = double(o.context) + o.steps * o.reps / 2.0;
  double kv_bytes = 4.0 * 2 * KvDim(c) * c.num_layers * mid_context * o.batch;
  double bw = MemcpyGBs(o.reps);
  double roofline_s = (weight_bytes + kv_bytes) / (bw * 1e9);
  out["decode"] = {{"batch", o.batch},
                   {"context", o.context},
                   {"steps", o.steps},
                   {"step_seconds", step_s},
                   {"tokens_per_s", o.batch / step_s},
                   {"weight_bytes", weight_bytes},
                   {"kv_bytes", kv_bytes},
                   {"memcpy_gbs", bw},
                   {"roofline_step_seconds", roofline_s},
                   {"roofline_tokens_per_s", o.batch / roofline_s}};
  std::cout << out.dump() << "\n";
  return 0;
}
