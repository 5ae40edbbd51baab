// The reference transformer (src/model) behind the Engine seam: prefill ranks compute real KV,
// chunk by chunk over a prefix read back from the store, and decode ranks continue each request
// from the blocks they received, so a disaggregated run gives the tokens `mooncake generate`
// gives in one process (docs/MODEL.md "The serving job with the reference engine").
//
// Prompts come from the trace's hash ids (model/trace_tokens.h), or are a client's tokens as
// given (HTTP completions); KV blocks are the model's
// float32 blocks of trace::kTraceBlockTokens tokens (model/kv_cache.h), the unit the job moves
// and stores. Times are measured wall time (models_time() is false).
//
// Threads: as engine.h says. The prefill side keeps the prompt being computed between chunks;
// the decode side keeps each joined request's cache and last token.
//
// The arithmetic is a KvCompute's (engine/kv_compute.h): the CPU transformer, or the CUDA one
// (engine/cuda, engine.device = cuda), whose blocks have the same layout.
#pragma once

#include <memory>
#include <optional>
#include <unordered_map>

#include "engine/engine.h"
#include "engine/kv_compute.h"
#include "model/transformer.h"

namespace mooncake::engine {

class ReferenceEngine final : public Engine {
 public:
  // On the CPU; `model` must outlive the engine.
  explicit ReferenceEngine(const model::Transformer& model);
  explicit ReferenceEngine(std::unique_ptr<KvCompute> compute);

  const model::KvShape& shape() const { return shape_; }
  uint64_t block_bytes() const override { return shape_.BlockBytes(); }
  std::unique_ptr<KvMemory> AllocateKv(uint64_t bytes) override;
  bool models_time() const override { return false; }
  PrefillResult Prefill(const PrefillChunk& chunk) override;
  Status StartDecode(uint64_t request, std::span<const std::byte> kv, int64_t input_length,
                     int32_t first_token) override;
  void EndDecode(uint64_t request) override;
  DecodeStep Decode(std::span<const DecodeSeq> batch) override;

 private:
  // The prompt whose chunks are being computed.
  struct Prompt {
    uint64_t request = 0;
    std::vector<int32_t> tokens;
    std::unique_ptr<SequenceKv> cache;
  };
  struct Sequence {
    std::unique_ptr<SequenceKv> cache;
    int32_t last_token = kNoToken;
  };
  // Rebuilds `prompt_` for the chunk when it is not the continuation of the last one: the KV of
  // the whole blocks before the chunk is taken from `chunk.kv`, the rest of the prefix recomputed.
  Status Resume(const PrefillChunk& chunk, int64_t* from_token);
  Result<std::vector<int32_t>> PromptOf(const PrefillChunk& chunk) const;

  std::unique_ptr<KvCompute> compute_;
  model::KvShape shape_;
  std::optional<Prompt> prompt_;
  std::unordered_map<uint64_t, Sequence> sequences_;
};

}  // namespace mooncake::engine
