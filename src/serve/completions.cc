#include "serve/completions.h"

#include <nlohmann/json.hpp>

#include "model/trace_tokens.h"

namespace mooncake::serve {

namespace {

using nlohmann::json;

// An integer field (a JSON number with no fraction); InvalidArgument names it otherwise.
Result<int64_t> IntegerField(const json& j, const char* name) {
  const json& v = j.at(name);
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
  }
  return InvalidArgument(std::string(name) + " must be an integer, not " + v.dump());
}

Result<bool> BoolField(const json& j, const char* name) {
  const json& v = j.at(name);
  if (!v.is_boolean()) return InvalidArgument(std::string(name) + " must be true or false");
  return v.get<bool>();
}

}  // namespace

Result<CompletionRequest> ParseCompletionRequest(const std::string& body,
                                                 const CompletionLimits& limits) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument("the body is not valid JSON");
  if (!j.is_object()) return InvalidArgument("the body must be a JSON object");
  CompletionRequest r;
  if (j.contains("model")) {
    if (!j["model"].is_string()) return InvalidArgument("model must be a string");
    r.model = j["model"].get<std::string>();
  }
  if (!j.contains("prompt")) return InvalidArgument("prompt is missing");
  const json& prompt = j["prompt"];
  if (prompt.is_string()) {
    return InvalidArgument(
        "prompt is text, and this job has no tokenizer: give it as a list of token ids");
  }
  if (!prompt.is_array()) return InvalidArgument("prompt must be a list of token ids");
  if (prompt.empty()) return InvalidArgument("prompt is empty");
  if (!prompt.front().is_number()) {
    return InvalidArgument(
        "prompt must be one list of token ids (a batch of prompts is not taken)");
  }
  if (static_cast<int64_t>(prompt.size()) > limits.max_prompt_tokens) {
    return InvalidArgument("prompt has " + std::to_string(prompt.size()) +
                           " tokens, more than the " + std::to_string(limits.max_prompt_tokens) +
                           " this job takes");
  }
  for (size_t i = 0; i < prompt.size(); ++i) {
    const json& t = prompt[i];
    if (!t.is_number_integer()) {
      return InvalidArgument("prompt[" + std::to_string(i) + "] is not an integer token id");
    }
    const int64_t id = t.get<int64_t>();
    if (id < 0 || (limits.vocab_size > 0 && id >= limits.vocab_size)) {
      return InvalidArgument("prompt[" + std::to_string(i) + "] = " + std::to_string(id) +
                             " is outside the vocabulary [0, " + std::to_string(limits.vocab_size) +
                             ")");
    }
    r.prompt_ids.push_back(static_cast<int32_t>(id));
  }
  int64_t max_tokens = limits.default_max_tokens;
  if (j.contains("max_tokens") && !j["max_tokens"].is_null()) {
    auto v = IntegerField(j, "max_tokens");
    if (!v.ok()) return v.status();
    max_tokens = *v;
  }
  if (max_tokens < 1 || max_tokens > limits.max_tokens) {
    return InvalidArgument("max_tokens = " + std::to_string(max_tokens) + " is outside [1, " +
                           std::to_string(limits.max_tokens) + "]");
  }
  r.max_tokens = static_cast<int32_t>(max_tokens);
  if (j.contains("temperature") && !j["temperature"].is_null()) {
    const json& t = j["temperature"];
    if (!t.is_number()) return InvalidArgument("temperature must be a number");
    if (t.get<double>() != 0.0) {
      return InvalidArgument("temperature = " + t.dump() + ": only 0 (greedy decoding) is served");
    }
  }
  if (j.contains("n") && !j["n"].is_null()) {
    auto n = IntegerField(j, "n");
    if (!n.ok()) return n.status();
    if (*n != 1) return InvalidArgument("n = " + std::to_string(*n) + ": only n = 1 is served");
  }
  for (const char* name : {"stream", "ignore_eos"}) {
    if (!j.contains(name) || j[name].is_null()) continue;
    auto b = BoolField(j, name);
    if (!b.ok()) return b.status();
    (std::string(name) == "stream" ? r.stream : r.ignore_eos) = *b;
  }
  return r;
}

std::vector<BlockHash> PromptBlockHashes(std::span<const int32_t> prompt_ids, int block_tokens) {
  std::vector<BlockHash> out;
  uint64_t chain = 0x6d6f6f6e63616b65ull;  // "mooncake"
  for (size_t start = 0; start < prompt_ids.size(); start += static_cast<size_t>(block_tokens)) {
    const size_t end = std::min(prompt_ids.size(), start + static_cast<size_t>(block_tokens));
    uint64_t h = model::SplitMix64(chain ^ (end - start));
    for (size_t i = start; i < end; ++i) {
      h = model::SplitMix64(h ^ static_cast<uint32_t>(prompt_ids[i]));
    }
    chain = h;
    out.push_back(BlockHash{h | (1ull << 63)});
  }
  return out;
}

std::vector<int32_t> ClientTokens(const std::vector<int32_t>& output_ids, bool ignore_eos,
                                  int32_t eos_token_id, std::string* finish_reason) {
  *finish_reason = "length";
  if (ignore_eos) return output_ids;
  std::vector<int32_t> out;
  for (int32_t t : output_ids) {
    out.push_back(t);
    if (t == eos_token_id) {
      *finish_reason = "stop";
      break;
    }
  }
  return out;
}

std::string ErrorBody(const std::string& message, const std::string& type, int code) {
  return json{{"error", {{"message", message}, {"type", type}, {"code", code}}}}.dump() + "\n";
}

}  // namespace mooncake::serve
