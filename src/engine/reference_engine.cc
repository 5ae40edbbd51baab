#include "engine/reference_engine.h"

#include <fmt/format.h>

#include "common/clock.h"
#include "model/trace_tokens.h"
#include "trace/trace_request.h"

namespace mooncake::engine {
namespace {

std::span<const float> FloatsOf(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const float*>(bytes.data()), bytes.size() / sizeof(float)};
}

}  // namespace

ReferenceEngine::ReferenceEngine(const model::Transformer& model)
    : ReferenceEngine(CpuKvCompute(model)) {}

ReferenceEngine::ReferenceEngine(std::unique_ptr<KvCompute> compute)
    : compute_(std::move(compute)),
      shape_{compute_->config().num_layers, compute_->config().num_kv_heads,
             compute_->config().head_dim, trace::kTraceBlockTokens} {}

std::unique_ptr<KvMemory> ReferenceEngine::AllocateKv(uint64_t bytes) {
  return std::make_unique<HostKvMemory>(bytes);
}

// A client's tokens as given (checked against the vocabulary), else the trace's from hash ids.
Result<std::vector<int32_t>> ReferenceEngine::PromptOf(const PrefillChunk& c) const {
  const int32_t vocab = compute_->config().vocab_size;
  if (c.prompt_ids.empty()) {
    std::vector<BlockHash> ids;
    ids.reserve(c.hash_ids.size());
    for (uint64_t h : c.hash_ids) ids.push_back(BlockHash{h});
    return model::PromptTokens(ids, c.input_length, shape_.block_tokens, vocab);
  }
  if (static_cast<int64_t>(c.prompt_ids.size()) != c.input_length) {
    return InvalidArgument(fmt::format("request {}: {} prompt tokens for an input of {}", c.request,
                                       c.prompt_ids.size(), c.input_length));
  }
  for (int32_t t : c.prompt_ids) {
    if (t < 0 || t >= vocab) {
      return InvalidArgument(fmt::format("request {}: prompt token {} outside the vocabulary of {}",
                                         c.request, t, vocab));
    }
  }
  return std::vector<int32_t>(c.prompt_ids.begin(), c.prompt_ids.end());
}

Status ReferenceEngine::Resume(const PrefillChunk& c, int64_t* from_token) {
  if (prompt_ && prompt_->request == c.request && prompt_->cache->tokens() == c.prefix_tokens) {
    *from_token = c.prefix_tokens;
    return Status::Ok();
  }
  auto tokens = PromptOf(c);
  if (!tokens.ok()) return tokens.status();
  prompt_.emplace(Prompt{c.request, std::move(*tokens), compute_->NewSequence(shape_)});
  // The whole blocks of the prefix come from `kv` (read from the store, or written by earlier
  // chunks); a partial one is recomputed from its first token.
  const int64_t whole = c.prefix_tokens / shape_.block_tokens;
  const uint64_t bb = block_bytes();
  if (c.kv.size() < static_cast<uint64_t>(whole) * bb) {
    return InvalidArgument(fmt::format("request {}: {} B of KV for a prefix of {} blocks",
                                       c.request, c.kv.size(), whole));
  }
  for (int64_t b = 0; b < whole; ++b) {
    MC_RETURN_IF_ERROR(
        prompt_->cache->AppendBlock(FloatsOf(c.kv.subspan(b * bb, bb)), shape_.block_tokens));
  }
  *from_token = whole * shape_.block_tokens;
  return Status::Ok();
}

PrefillResult ReferenceEngine::Prefill(const PrefillChunk& c) {
  const Nanos start = SteadyClock().Now();
  PrefillResult result;
  result.time.modelled = false;
  int64_t from = 0;
  Status s = Resume(c, &from);
  const int64_t end = c.prefix_tokens + c.tokens;
  if (s.ok() && (end > c.input_length || end <= from)) {
    s = InvalidArgument(fmt::format("request {}: chunk [{}, {}) of a {}-token prompt", c.request,
                                    c.prefix_tokens, end, c.input_length));
  }
  std::vector<float> logits;
  const uint64_t bb = block_bytes();
  const size_t lf = shape_.LayerFloats();
  // Layer by layer when asked: each finished layer's piece of the chunk's blocks goes to `kv`
  // and to the caller while the next layer computes.
  const bool by_layer = c.on_layer && c.end_block > c.first_block;
  auto layer_ready = [&](int32_t layer) -> Status {
    for (int b = c.first_block; b < c.end_block; ++b) {
      float* piece = reinterpret_cast<float*>(c.kv.data() + b * bb) + size_t(layer) * lf;
      MC_RETURN_IF_ERROR(prompt_->cache->CopyLayerOut(b, layer, {piece, lf}));
    }
    c.on_layer(layer);
    return Status::Ok();
  };
  if (s.ok()) {
    s = compute_->Prefill(
        std::span(prompt_->tokens).subspan(from, end - from), prompt_->cache.get(), &logits,
        by_layer ? model::Transformer::LayerReady(layer_ready) : model::Transformer::LayerReady());
  }
  for (int b = c.first_block; s.ok() && !by_layer && b < c.end_block; ++b) {
    s = prompt_->cache->CopyBlockOut(
        b, {reinterpret_cast<float*>(c.kv.data() + b * bb), shape_.BlockFloats()});
  }
  if (!s.ok()) {
    prompt_.reset();
    result.error = s.ToString();
    return result;
  }
  if (end == c.input_length) {
    result.next_token = model::Argmax(logits);
    prompt_.reset();
  }
  result.time.model = SteadyClock().Now() - start;
  return result;
}

Status ReferenceEngine::StartDecode(uint64_t request, std::span<const std::byte> kv,
                                    int64_t input_length, int32_t first_token) {
  const int64_t bt = shape_.block_tokens;
  const int64_t blocks = (input_length + bt - 1) / bt;
  const uint64_t bb = block_bytes();
  if (input_length < 1 || kv.size() < static_cast<uint64_t>(blocks) * bb) {
    return InvalidArgument(fmt::format("request {}: {} B of KV for a {}-token prompt ({} blocks)",
                                       request, kv.size(), input_length, blocks));
  }
  if (first_token < 0 || first_token >= compute_->config().vocab_size) {
    return InvalidArgument(fmt::format("request {}: first token {} outside the vocabulary of {}",
                                       request, first_token, compute_->config().vocab_size));
  }
  Sequence seq{compute_->NewSequence(shape_), first_token};
  for (int64_t b = 0; b < blocks; ++b) {
    const auto held = static_cast<int32_t>(std::min(bt, input_length - b * bt));
    MC_RETURN_IF_ERROR(seq.cache->AppendBlock(FloatsOf(kv.subspan(b * bb, bb)), held));
  }
  sequences_.insert_or_assign(request, std::move(seq));
  return Status::Ok();
}

void ReferenceEngine::EndDecode(uint64_t request) { sequences_.erase(request); }

DecodeStep ReferenceEngine::Decode(std::span<const DecodeSeq> batch) {
  const Nanos start = SteadyClock().Now();
  DecodeStep step;
  step.time.modelled = false;
  std::vector<SequenceKv*> caches;
  std::vector<int32_t> tokens;
  for (const DecodeSeq& d : batch) {
    auto it = sequences_.find(d.request);
    if (it == sequences_.end()) {
      step.error = fmt::format("request {} is in the decode batch but never started", d.request);
      return step;
    }
    caches.push_back(it->second.cache.get());
    tokens.push_back(it->second.last_token);
  }
  std::vector<float> logits;
  Status s = compute_->DecodeStep(caches, tokens, &logits);
  if (!s.ok()) {
    step.error = s.ToString();
    return step;
  }
  const size_t vocab = static_cast<size_t>(compute_->config().vocab_size);
  for (size_t i = 0; i < batch.size(); ++i) {
    const int32_t next = model::Argmax(std::span(logits).subspan(i * vocab, vocab));
    sequences_.at(batch[i].request).last_token = next;
    step.next_tokens.push_back(next);
  }
  step.time.model = SteadyClock().Now() - start;
  return step;
}

}  // namespace mooncake::engine
