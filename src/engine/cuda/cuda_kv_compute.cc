// The CUDA transformer's host side: weights and KV on the device, the forward pass as
// model/transformer.cc's (the same steps in the same order), matmuls through cuBLAS.
//
// Everything runs on the legacy default stream, so every copy and launch is ordered after the
// previous one and a synchronous cudaMemcpy sees the kernels' results; each call selects its
// device first (cudaSetDevice is per thread, and the engine's worker is not the creating thread).
#include "engine/cuda/cuda_kv_compute.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cmath>
#include <set>

#include "engine/cuda/cublas_loader.h"
#include "engine/cuda/kernel_layout.h"
#include "engine/cuda/transformer_kernels.h"
#include "gpu/gpu.h"

namespace mooncake::engine {
namespace {

using cuda::KvGeometry;
using cuda::QkvRow;

Status CudaError(const char* what, cudaError_t e) {
  return Internal(fmt::format("CUDA {}: {}", what, cudaGetErrorString(e)));
}

#define MC_CUDA(expr)                          \
  do {                                         \
    const cudaError_t mc_cuda_error_ = (expr); \
    if (mc_cuda_error_ != cudaSuccess) {       \
      return CudaError(#expr, mc_cuda_error_); \
    }                                          \
  } while (0)

// Device memory of `T`s that frees itself; Reserve keeps the contents only when asked to.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() {
    if (data_ != nullptr) cudaFree(data_);
  }
  T* get() const { return data_; }
  size_t size() const { return size_; }
  // Room for `n` elements; new room is zero. `keep`: the first `keep` elements move along.
  Status Reserve(size_t n, size_t keep = 0) {
    if (n <= size_) return Status::Ok();
    void* raw = nullptr;
    MC_CUDA(cudaMalloc(&raw, n * sizeof(T)));
    T* fresh = static_cast<T*>(raw);
    Status s = Status::Ok();
    if (cudaError_t e = cudaMemset(fresh, 0, n * sizeof(T)); e != cudaSuccess) {
      s = CudaError("cudaMemset", e);
    } else if (keep > 0) {
      if (cudaError_t c = cudaMemcpy(fresh, data_, keep * sizeof(T), cudaMemcpyDeviceToDevice);
          c != cudaSuccess) {
        s = CudaError("cudaMemcpy (device to device)", c);
      }
    }
    if (!s.ok()) {
      cudaFree(fresh);
      return s;
    }
    if (data_ != nullptr) cudaFree(data_);
    data_ = fresh;
    size_ = n;
    return Status::Ok();
  }
  Status Upload(const T* host, size_t n) {
    MC_RETURN_IF_ERROR(Reserve(n));
    MC_CUDA(cudaMemcpy(data_, host, n * sizeof(T), cudaMemcpyHostToDevice));
    return Status::Ok();
  }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

// One sequence's KV on the device: its blocks one after another (kernel_layout.h), the blocks
// past the last one zero, as model::KvCache's new blocks are.
class CudaSequence final : public SequenceKv {
 public:
  CudaSequence(KvGeometry geometry, int device) : geometry_(geometry), device_(device) {}
  int64_t tokens() const override { return tokens_; }
  const KvGeometry& geometry() const { return geometry_; }
  float* data() const { return blocks_.get(); }

  Status AppendBlock(std::span<const float> block, int32_t tokens_in_block) override {
    const int32_t bt = geometry_.block_tokens;
    if (tokens_ % bt != 0) {
      return InvalidArgument(fmt::format(
          "KV cache holds {} tokens, not whole blocks of {}: a block can only be appended on a "
          "block boundary",
          tokens_, bt));
    }
    const size_t bf = geometry_.BlockFloats();
    if (block.size() != bf || tokens_in_block < 1 || tokens_in_block > bt) {
      return InvalidArgument(fmt::format(
          "KV block of {} floats holding {} tokens: expected {} floats and 1 to {} tokens",
          block.size(), tokens_in_block, bf, bt));
    }
    MC_CUDA(cudaSetDevice(device_));
    const size_t index = static_cast<size_t>(tokens_ / bt);
    MC_RETURN_IF_ERROR(Room(index + 1));
    MC_CUDA(cudaMemcpy(blocks_.get() + index * bf, block.data(), bf * sizeof(float),
                       cudaMemcpyHostToDevice));
    tokens_ += tokens_in_block;
    return Status::Ok();
  }

  Status CopyBlockOut(size_t index, std::span<float> out) const override {
    const size_t bf = geometry_.BlockFloats();
    if (index >= Blocks(tokens_) || out.size() != bf) {
      return InvalidArgument(fmt::format("CopyBlockOut: block {} of {}, {} floats for {}", index,
                                         Blocks(tokens_), out.size(), bf));
    }
    MC_CUDA(cudaSetDevice(device_));
    MC_CUDA(cudaMemcpy(out.data(), blocks_.get() + index * bf, bf * sizeof(float),
                       cudaMemcpyDeviceToHost));
    return Status::Ok();
  }

  // A synchronous copy on the legacy default stream: it waits for the kernels queued before it,
  // which during a prefill's layer callback are those up to this layer's KV store.
  Status CopyLayerOut(size_t index, int32_t layer, std::span<float> out) const override {
    const size_t bf = geometry_.BlockFloats();
    const size_t lf = bf / static_cast<size_t>(geometry_.layers);
    if (index >= Blocks(tokens_) || layer < 0 || layer >= geometry_.layers || out.size() != lf) {
      return InvalidArgument(
          fmt::format("CopyLayerOut: layer {} of block {} of {}, {} floats for {}", layer, index,
                      Blocks(tokens_), out.size(), lf));
    }
    MC_CUDA(cudaSetDevice(device_));
    MC_CUDA(cudaMemcpy(out.data(), blocks_.get() + index * bf + size_t(layer) * lf,
                       lf * sizeof(float), cudaMemcpyDeviceToHost));
    return Status::Ok();
  }

  // Room for `more` further tokens; `*first` is the first new position.
  Status Grow(int64_t more, int64_t* first) {
    MC_RETURN_IF_ERROR(Room(Blocks(tokens_ + more)));
    *first = tokens_;
    tokens_ += more;
    return Status::Ok();
  }

 private:
  size_t Blocks(int64_t tokens) const {
    return static_cast<size_t>((tokens + geometry_.block_tokens - 1) / geometry_.block_tokens);
  }
  // Capacity for `blocks` blocks, doubling, so a decode's growth copies O(log n) times.
  Status Room(size_t blocks) {
    const size_t bf = geometry_.BlockFloats();
    if (blocks * bf <= blocks_.size()) return Status::Ok();
    const size_t have = blocks_.size() / bf;
    return blocks_.Reserve(std::max(blocks, 2 * have) * bf, Blocks(tokens_) * bf);
  }

  KvGeometry geometry_;
  int device_;
  int64_t tokens_ = 0;
  DeviceArray<float> blocks_;
};

struct DeviceLayer {
  DeviceArray<float> input_norm, qkv, o, post_norm, gate_up, down;
};

// The forward pass's buffers, grown to the largest pass so far.
struct Workspace {
  DeviceArray<int32_t> tokens, last_rows;
  DeviceArray<int64_t> positions;
  DeviceArray<float*> row_kv;
  DeviceArray<float> x, xn, qkv, att, gate_up, act, last_norm, logits;
};

class CudaCompute final : public KvCompute {
 public:
  CudaCompute(model::ModelConfig config, int device)
      : config_(std::move(config)),
        device_(device),
        row_{config_.num_heads, config_.num_kv_heads, config_.head_dim} {}
  ~CudaCompute() override {
    if (cublas_ != nullptr) {
      cudaSetDevice(device_);
      api_->destroy(cublas_);
    }
  }

  Status Init(const model::ModelWeights& w);

  const model::ModelConfig& config() const override { return config_; }
  std::string device() const override { return device_name_; }
  std::unique_ptr<SequenceKv> NewSequence(const model::KvShape& shape) const override {
    return std::make_unique<CudaSequence>(
        KvGeometry{shape.layers, shape.kv_heads, shape.head_dim, shape.block_tokens}, device_);
  }
  using KvCompute::Prefill;
  Status Prefill(std::span<const int32_t> tokens, SequenceKv* kv, std::vector<float>* last_logits,
                 const model::Transformer::LayerReady& on_layer) const override {
    if (tokens.empty()) return InvalidArgument("Prefill: no tokens");
    CudaSequence* seq = static_cast<CudaSequence*>(kv);
    return Forward(std::span<CudaSequence* const>(&seq, 1), tokens, {}, last_logits,
                   on_layer ? &on_layer : nullptr);
  }
  Status DecodeStep(std::span<SequenceKv* const> kvs, std::span<const int32_t> tokens,
                    std::vector<float>* logits) const override {
    if (kvs.size() != tokens.size() || kvs.empty()) {
      return InvalidArgument(
          fmt::format("DecodeStep: {} caches for {} tokens", kvs.size(), tokens.size()));
    }
    if (std::set<SequenceKv*>(kvs.begin(), kvs.end()).size() != kvs.size()) {
      return InvalidArgument("DecodeStep: a cache appears twice in one batch");
    }
    std::vector<CudaSequence*> seqs;
    for (SequenceKv* kv : kvs) seqs.push_back(static_cast<CudaSequence*>(kv));
    const std::vector<int64_t> ones(kvs.size(), 1);
    return Forward(seqs, tokens, ones, logits);
  }

 private:
  // Sequence i gets `counts[i]` of `tokens` (empty counts: one sequence gets them all).
  // `on_layer`: called after each layer's KV store kernel was queued (KvCompute::Prefill).
  Status Forward(std::span<CudaSequence* const> seqs, std::span<const int32_t> tokens,
                 std::span<const int64_t> counts, std::vector<float>* logits,
                 const model::Transformer::LayerReady* on_layer = nullptr) const;
  // Forward's parts: the inputs checked against the model; the sequences grown and every
  // row's token, position and KV uploaded, the workspace sized; one layer queued; the last
  // rows' logits computed and copied back.
  Status CheckInputs(std::span<CudaSequence* const> seqs, std::span<const int32_t> tokens) const;
  Status PlaceRows(std::span<CudaSequence* const> seqs, std::span<const int32_t> tokens,
                   std::span<const int64_t> counts) const;
  Status Layer(int32_t l, int64_t rows, const KvGeometry& geometry,
               const model::Transformer::LayerReady* on_layer) const;
  Status LastRowLogits(int64_t n, std::vector<float>* logits) const;
  // y[rows, out] = x[rows, in] W^T + beta y, W [out, in] as nn.Linear stores it.
  Status Linear(const float* x, int64_t rows, int64_t in, const float* w, int64_t out, float* y,
                float beta) const {
    const cuda::GemmArgs a = cuda::LinearGemm(rows, in, out);
    const float alpha = 1.0f;
    const cublasStatus_t s = api_->sgemm(
        cublas_, a.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
        a.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(a.m), static_cast<int>(a.n),
        static_cast<int>(a.k), &alpha, w, static_cast<int>(a.lda), x, static_cast<int>(a.ldb),
        &beta, y, static_cast<int>(a.ldc));
    if (s != CUBLAS_STATUS_SUCCESS) {
      return Internal(
          fmt::format("cuBLAS sgemm {}x{}x{}: {}", a.m, a.n, a.k, api_->status_string(s)));
    }
    return Status::Ok();
  }

  model::ModelConfig config_;
  int device_;
  QkvRow row_;
  std::string device_name_;
  const CublasApi* api_ = nullptr;  // set by Init before cublas_
  cublasHandle_t cublas_ = nullptr;
  DeviceArray<float> embed_, final_norm_, lm_head_, inv_freq_;
  std::vector<DeviceLayer> layers_;
  mutable Workspace ws_;
};

// Matrices stacked as rows of one [out, in] matrix (each already [out_i, in]).
std::vector<float> Stack(std::initializer_list<const std::vector<float>*> parts) {
  std::vector<float> all;
  for (const std::vector<float>* p : parts) all.insert(all.end(), p->begin(), p->end());
  return all;
}

Status CudaCompute::Init(const model::ModelWeights& w) {
  const model::ModelConfig& c = config_;
  const size_t h = c.hidden_size, vocab = c.vocab_size;
  MC_RETURN_IF_ERROR(model::CheckWeightSizes(c, w));
  MC_CUDA(cudaSetDevice(device_));
  cudaDeviceProp prop{};
  MC_CUDA(cudaGetDeviceProperties(&prop, device_));
  device_name_ = fmt::format("cuda:{} ({})", device_, prop.name);
  auto api = Cublas();
  if (!api.ok()) return api.status();
  api_ = *api;
  if (cublasStatus_t s = api_->create(&cublas_); s != CUBLAS_STATUS_SUCCESS) {
    cublas_ = nullptr;
    return Internal(fmt::format("cuBLAS create on {}: {}", device_name_, api_->status_string(s)));
  }
  // Plain float32 products: the default math mode never uses TF32 for SGEMM.
  api_->set_math_mode(cublas_, CUBLAS_DEFAULT_MATH);
  MC_RETURN_IF_ERROR(embed_.Upload(w.embed.data(), w.embed.size()));
  MC_RETURN_IF_ERROR(final_norm_.Upload(w.final_norm.data(), h));
  if (!c.tie_word_embeddings) MC_RETURN_IF_ERROR(lm_head_.Upload(w.lm_head.data(), vocab * h));
  const std::vector<float> inv_freq = model::RopeInverseFrequencies(c);  // the CPU model's bits
  MC_RETURN_IF_ERROR(inv_freq_.Upload(inv_freq.data(), inv_freq.size()));
  layers_ = std::vector<DeviceLayer>(w.layers.size());
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const model::LayerWeights& L = w.layers[l];
    DeviceLayer& D = layers_[l];
    const std::vector<float> qkv = Stack({&L.q, &L.k, &L.v});
    const std::vector<float> gate_up = Stack({&L.gate, &L.up});
    MC_RETURN_IF_ERROR(D.input_norm.Upload(L.input_norm.data(), h));
    MC_RETURN_IF_ERROR(D.qkv.Upload(qkv.data(), qkv.size()));
    MC_RETURN_IF_ERROR(D.o.Upload(L.o.data(), L.o.size()));
    MC_RETURN_IF_ERROR(D.post_norm.Upload(L.post_norm.data(), h));
    MC_RETURN_IF_ERROR(D.gate_up.Upload(gate_up.data(), gate_up.size()));
    MC_RETURN_IF_ERROR(D.down.Upload(L.down.data(), L.down.size()));
  }
  return Status::Ok();
}

Status CudaCompute::CheckInputs(std::span<CudaSequence* const> seqs,
                                std::span<const int32_t> tokens) const {
  const model::ModelConfig& c = config_;
  for (CudaSequence* s : seqs) {
    const KvGeometry& g = s->geometry();
    if (g.layers != c.num_layers || g.kv_heads != c.num_kv_heads || g.head_dim != c.head_dim ||
        g.block_tokens < 1) {
      return InvalidArgument(fmt::format(
          "KV cache of {} layers x {} kv heads x {} dims (blocks of {}) does not fit model {}",
          g.layers, g.kv_heads, g.head_dim, g.block_tokens, c.name));
    }
  }
  for (int32_t t : tokens) {
    if (t < 0 || t >= c.vocab_size) {
      return InvalidArgument(
          fmt::format("token id {} outside the vocabulary [0, {})", t, c.vocab_size));
    }
  }
  return Status::Ok();
}

Status CudaCompute::PlaceRows(std::span<CudaSequence* const> seqs, std::span<const int32_t> tokens,
                              std::span<const int64_t> counts) const {
  const model::ModelConfig& c = config_;
  // Row r: its sequence's KV and its position there; each sequence's last row gives logits.
  const int64_t rows = static_cast<int64_t>(tokens.size());
  const int64_t n = static_cast<int64_t>(seqs.size());
  std::vector<int64_t> positions(rows);
  std::vector<CudaSequence*> seq_of(rows);
  std::vector<int32_t> last_rows(n);
  int64_t r = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t count = counts.empty() ? rows : counts[i];
    int64_t first = 0;
    MC_RETURN_IF_ERROR(seqs[i]->Grow(count, &first));
    for (int64_t j = 0; j < count; ++j, ++r) {
      positions[r] = first + j;
      seq_of[r] = seqs[i];
    }
    last_rows[i] = static_cast<int32_t>(r - 1);
  }
  std::vector<float*> row_kv(rows);  // after every Grow: a grown sequence may have moved
  for (r = 0; r < rows; ++r) row_kv[r] = seq_of[r]->data();
  const int64_t h = c.hidden_size, nq = int64_t{c.num_heads} * c.head_dim,
                ffn = c.intermediate_size, vocab = c.vocab_size;
  Workspace& w = ws_;
  MC_RETURN_IF_ERROR(w.tokens.Upload(tokens.data(), rows));
  MC_RETURN_IF_ERROR(w.positions.Upload(positions.data(), rows));
  MC_RETURN_IF_ERROR(w.row_kv.Upload(row_kv.data(), rows));
  MC_RETURN_IF_ERROR(w.last_rows.Upload(last_rows.data(), n));
  MC_RETURN_IF_ERROR(w.x.Reserve(rows * h));
  MC_RETURN_IF_ERROR(w.xn.Reserve(rows * h));
  MC_RETURN_IF_ERROR(w.qkv.Reserve(rows * row_.width()));
  MC_RETURN_IF_ERROR(w.att.Reserve(rows * nq));
  MC_RETURN_IF_ERROR(w.gate_up.Reserve(rows * 2 * ffn));
  MC_RETURN_IF_ERROR(w.act.Reserve(rows * ffn));
  MC_RETURN_IF_ERROR(w.last_norm.Reserve(n * h));
  return w.logits.Reserve(n * vocab);
}

Status CudaCompute::Layer(int32_t l, int64_t rows, const KvGeometry& geometry,
                          const model::Transformer::LayerReady* on_layer) const {
  const model::ModelConfig& c = config_;
  const int64_t h = c.hidden_size, nq = int64_t{c.num_heads} * c.head_dim,
                ffn = c.intermediate_size;
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));  // as model/attention.cc
  Workspace& w = ws_;
  const DeviceLayer& L = layers_[l];
  MC_CUDA(cuda::LaunchRmsNorm(w.x.get(), nullptr, rows, c.hidden_size, L.input_norm.get(),
                              c.rms_norm_eps, w.xn.get(), nullptr));
  MC_RETURN_IF_ERROR(Linear(w.xn.get(), rows, h, L.qkv.get(), row_.width(), w.qkv.get(), 0.0f));
  MC_CUDA(cuda::LaunchRopeAndStoreKv(w.qkv.get(), row_, rows, w.positions.get(), w.row_kv.get(),
                                     geometry, l, inv_freq_.get(), nullptr));
  // The layer's KV is queued for the cache: the callback's copy (CopyLayerOut, synchronous)
  // waits for it, and the rest of the layer is queued after. Straightforward, not the
  // fastest: the GPU idles while the host copies and queues; an event after the store and
  // an asynchronous copy on a second stream into pinned memory would keep it busy.
  if (on_layer != nullptr) MC_RETURN_IF_ERROR((*on_layer)(l));
  MC_CUDA(cuda::LaunchAttention(w.qkv.get(), row_, rows, w.positions.get(), w.row_kv.get(),
                                geometry, l, scale, w.att.get(), nullptr));
  MC_RETURN_IF_ERROR(Linear(w.att.get(), rows, nq, L.o.get(), h, w.x.get(), 1.0f));  // x += o
  MC_CUDA(cuda::LaunchRmsNorm(w.x.get(), nullptr, rows, c.hidden_size, L.post_norm.get(),
                              c.rms_norm_eps, w.xn.get(), nullptr));
  MC_RETURN_IF_ERROR(Linear(w.xn.get(), rows, h, L.gate_up.get(), 2 * ffn, w.gate_up.get(), 0.0f));
  MC_CUDA(cuda::LaunchSwiGlu(w.gate_up.get(), rows, c.intermediate_size, w.act.get(), nullptr));
  return Linear(w.act.get(), rows, ffn, L.down.get(), h, w.x.get(), 1.0f);
}

Status CudaCompute::LastRowLogits(int64_t n, std::vector<float>* logits) const {
  const model::ModelConfig& c = config_;
  const int64_t h = c.hidden_size, vocab = c.vocab_size;
  Workspace& w = ws_;
  MC_CUDA(cuda::LaunchRmsNorm(w.x.get(), w.last_rows.get(), n, c.hidden_size, final_norm_.get(),
                              c.rms_norm_eps, w.last_norm.get(), nullptr));
  const float* head = c.tie_word_embeddings ? embed_.get() : lm_head_.get();
  MC_RETURN_IF_ERROR(Linear(w.last_norm.get(), n, h, head, vocab, w.logits.get(), 0.0f));
  logits->resize(n * vocab);
  MC_CUDA(cudaMemcpy(logits->data(), w.logits.get(), n * vocab * sizeof(float),
                     cudaMemcpyDeviceToHost));
  return Status::Ok();
}

Status CudaCompute::Forward(std::span<CudaSequence* const> seqs, std::span<const int32_t> tokens,
                            std::span<const int64_t> counts, std::vector<float>* logits,
                            const model::Transformer::LayerReady* on_layer) const {
  MC_RETURN_IF_ERROR(CheckInputs(seqs, tokens));
  MC_CUDA(cudaSetDevice(device_));
  MC_RETURN_IF_ERROR(PlaceRows(seqs, tokens, counts));
  const int64_t rows = static_cast<int64_t>(tokens.size());
  const KvGeometry geometry = seqs[0]->geometry();
  MC_CUDA(cuda::LaunchEmbed(embed_.get(), ws_.tokens.get(), rows, config_.hidden_size, ws_.x.get(),
                            nullptr));
  for (int32_t l = 0; l < config_.num_layers; ++l) {
    MC_RETURN_IF_ERROR(Layer(l, rows, geometry, on_layer));
  }
  return LastRowLogits(static_cast<int64_t>(seqs.size()), logits);
}

}  // namespace

Result<std::unique_ptr<KvCompute>> CudaKvCompute(const model::LoadedModel& model, int device) {
  MC_RETURN_IF_ERROR(model.config.Validate());
  const gpu::GpuInfo info = gpu::Probe();
  if (info.devices == 0) {
    return NotSupported("no CUDA GPU to run the model on: " + gpu::Describe(info));
  }
  if (device < 0 || device >= info.devices) {
    return InvalidArgument(fmt::format("CUDA device {} of {}", device, info.devices));
  }
  const cuda::AttentionLaunch a =
      cuda::AttentionLaunchFor(1, model.config.num_heads, model.config.head_dim);
  if (a.shared_bytes > cuda::kDefaultSharedBytes) {
    return NotSupported(fmt::format("head_dim {}: the attention kernel needs {} B of shared memory",
                                    model.config.head_dim, a.shared_bytes));
  }
  auto compute = std::make_unique<CudaCompute>(model.config, device);
  MC_RETURN_IF_ERROR(compute->Init(model.weights));
  return std::unique_ptr<KvCompute>(std::move(compute));
}

}  // namespace mooncake::engine
