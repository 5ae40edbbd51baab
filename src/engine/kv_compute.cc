#include "engine/kv_compute.h"

#include <algorithm>

namespace mooncake::engine {
namespace {

class CpuSequence final : public SequenceKv {
 public:
  explicit CpuSequence(const model::KvShape& shape) : cache(shape) {}
  int64_t tokens() const override { return cache.tokens(); }
  Status AppendBlock(std::span<const float> block, int32_t tokens_in_block) override {
    return cache.AppendBlock(block, tokens_in_block);
  }
  Status CopyBlockOut(size_t index, std::span<float> out) const override {
    if (index >= cache.num_blocks() || out.size() != cache.shape().BlockFloats()) {
      return InvalidArgument("CopyBlockOut: no such block, or the wrong size");
    }
    std::copy_n(cache.block(index).data(), out.size(), out.data());
    return Status::Ok();
  }
  Status CopyLayerOut(size_t index, int32_t layer, std::span<float> out) const override {
    const model::KvShape& shape = cache.shape();
    if (index >= cache.num_blocks() || layer < 0 || layer >= shape.layers ||
        out.size() != shape.LayerFloats()) {
      return InvalidArgument("CopyLayerOut: no such block or layer, or the wrong size");
    }
    std::copy_n(cache.block(index).data() + size_t(layer) * out.size(), out.size(), out.data());
    return Status::Ok();
  }
  model::KvCache cache;
};

class CpuCompute final : public KvCompute {
 public:
  explicit CpuCompute(const model::Transformer& model) : model_(model) {}
  const model::ModelConfig& config() const override { return model_.config(); }
  std::string device() const override { return "cpu"; }
  std::unique_ptr<SequenceKv> NewSequence(const model::KvShape& shape) const override {
    return std::make_unique<CpuSequence>(shape);
  }
  using KvCompute::Prefill;
  Status Prefill(std::span<const int32_t> tokens, SequenceKv* kv, std::vector<float>* last_logits,
                 const model::Transformer::LayerReady& on_layer) const override {
    return model_.Prefill(tokens, &static_cast<CpuSequence*>(kv)->cache, last_logits, on_layer);
  }
  Status DecodeStep(std::span<SequenceKv* const> kvs, std::span<const int32_t> tokens,
                    std::vector<float>* logits) const override {
    std::vector<model::KvCache*> caches;
    for (SequenceKv* kv : kvs) caches.push_back(&static_cast<CpuSequence*>(kv)->cache);
    return model_.DecodeStep(caches, tokens, logits);
  }

 private:
  const model::Transformer& model_;
};

}  // namespace

std::unique_ptr<KvCompute> CpuKvCompute(const model::Transformer& model) {
  return std::make_unique<CpuCompute>(model);
}

}  // namespace mooncake::engine
