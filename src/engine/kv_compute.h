// What the reference engine computes with: the CPU transformer (src/model), or the CUDA one
// (engine/cuda). Both keep a sequence's KV in the blocks of model/kv_cache.h's layout, so a block
// computed by one continues on the other (docs/MODEL.md "On a GPU").
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/config.h"
#include "model/kv_cache.h"
#include "model/transformer.h"

namespace mooncake::engine {

// One sequence's KV, where its compute keeps it (host or device memory).
class SequenceKv {
 public:
  virtual ~SequenceKv() = default;
  virtual int64_t tokens() const = 0;
  // As model::KvCache::AppendBlock: a block of BlockFloats() floats from the host, holding
  // `tokens_in_block` tokens, appended where the sequence ends on a block boundary.
  virtual Status AppendBlock(std::span<const float> block, int32_t tokens_in_block) = 0;
  // Block `index` into `out` (BlockFloats() floats of host memory).
  virtual Status CopyBlockOut(size_t index, std::span<float> out) const = 0;
  // Layer `layer`'s K and V of block `index` (contiguous in the block: KvShape::LayerFloats()
  // floats at layer x LayerFloats()) into `out`, host memory of that size.
  virtual Status CopyLayerOut(size_t index, int32_t layer, std::span<float> out) const = 0;
};

// Not thread-safe unless an implementation says so: the engine calls it from one thread at a time.
class KvCompute {
 public:
  virtual ~KvCompute() = default;
  virtual const model::ModelConfig& config() const = 0;
  // "cpu" or "cuda:0 (NVIDIA H100 ...)": where the arithmetic runs.
  virtual std::string device() const = 0;
  virtual std::unique_ptr<SequenceKv> NewSequence(const model::KvShape& shape) const = 0;
  // As model::Transformer::Prefill and DecodeStep, over sequences made by this NewSequence.
  // `on_layer` (may be empty): called once per layer, in order, as soon as that layer's KV of
  // the chunk is in `kv` and final, before the next layer is computed; it may read it with
  // SequenceKv::CopyLayerOut (model::Transformer::LayerReady).
  virtual Status Prefill(std::span<const int32_t> tokens, SequenceKv* kv,
                         std::vector<float>* last_logits,
                         const model::Transformer::LayerReady& on_layer) const = 0;
  Status Prefill(std::span<const int32_t> tokens, SequenceKv* kv,
                 std::vector<float>* last_logits) const {
    return Prefill(tokens, kv, last_logits, {});
  }
  virtual Status DecodeStep(std::span<SequenceKv* const> kvs, std::span<const int32_t> tokens,
                            std::vector<float>* logits) const = 0;
};

// The CPU transformer; `model` must outlive it.
std::unique_ptr<KvCompute> CpuKvCompute(const model::Transformer& model);

}  // namespace mooncake::engine
