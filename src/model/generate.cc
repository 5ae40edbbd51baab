#include "model/generate.h"

namespace mooncake::model {

Result<Generation> Generate(const Transformer& model, std::span<const int32_t> prompt,
                            const GenerateOptions& options) {
  if (prompt.empty()) return InvalidArgument("an empty prompt");
  KvCache cache(model.KvShapeFor(options.block_tokens));
  Generation g;
  MC_RETURN_IF_ERROR(model.Prefill(prompt, &cache, &g.prompt_logits));
  std::vector<float> logits = g.prompt_logits;
  for (int64_t i = 0; i < options.max_tokens; ++i) {
    int32_t next = Argmax(logits);
    g.output_ids.push_back(next);
    if (options.stop_at_eos && next == model.config().eos_token_id) break;
    if (i + 1 == options.max_tokens) break;
    KvCache* c = &cache;
    MC_RETURN_IF_ERROR(model.DecodeStep(std::span(&c, 1), std::span(&next, 1), &logits));
  }
  return g;
}

}  // namespace mooncake::model
