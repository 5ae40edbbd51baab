#include "engine/generate_command.h"

#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/cli/subcommand.h"
#include "engine/engine_options.h"
#include "model/generate.h"
#include "model/matmul.h"
#include "model/trace_tokens.h"
#include "trace/trace_reader.h"

namespace mooncake::engine {

namespace {

namespace po = boost::program_options;

po::options_description GenerateOptionsDescription() {
  po::options_description d(
      "Usage: mooncake generate --model DIR|PRESET (--prompt-ids IDS... | --trace FILE) "
      "[options]\n\nGreedy generation with the reference model, one JSON line per prompt\n\n"
      "Options");
  AddReferenceModelOptions(
      d,
      "a Hugging Face LLaMA checkpoint folder (config.json + model.safetensors) or a preset: "
      "tiny | mini | small");
  d.add_options()(
      "prompt-ids", po::value<std::vector<std::string>>()->composing(),
      "a prompt as comma-separated token ids, used as given (no BOS added); repeatable")(
      "max-tokens", po::value<int64_t>(),
      "tokens to generate per prompt (with --trace: at most this many, default each "
      "request's output_length)")("stop-at-eos", po::bool_switch(),
                                  "stop a prompt after the end-of-sequence token")(
      "print-logits", po::bool_switch(),
      "also print the logits after the last prompt token (prompt_logits)")(
      "trace", po::value<std::string>(),
      "take the prompts from a Mooncake trace (tokens from hash ids, docs/MODEL.md)")(
      "trace.limit", po::value<int64_t>()->default_value(0), "requests to take (0 = all)")(
      "trace.offset", po::value<int64_t>()->default_value(0), "valid requests to skip first");
  return d;
}

struct Prompt {
  std::string label;  // "prompt": i or "request": id
  int64_t index = 0;
  std::vector<int32_t> ids;
  int64_t max_tokens = 0;
};

int Usage(const std::string& message) { return cli::SubcommandUsage("generate", message); }

Result<std::vector<int32_t>> ParseIds(const std::string& text, int32_t vocab) {
  std::vector<int32_t> ids;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0 || v >= vocab) {
      return InvalidArgument(
          fmt::format("prompt-ids = '{}': '{}' is not a token id in [0, {})", text, item, vocab));
    }
    ids.push_back(static_cast<int32_t>(v));
  }
  if (ids.empty()) return InvalidArgument(fmt::format("prompt-ids = '{}': no token ids", text));
  return ids;
}

}  // namespace

int RunGenerate(int argc, char** argv) {
  const po::options_description desc = GenerateOptionsDescription();
  po::variables_map vm;
  if (int code = cli::ParseSubcommand("generate", argc, argv, desc, &vm); code >= 0) return code;
  if (!vm.count("model")) return Usage("--model is required (a checkpoint folder or a preset)");
  const bool from_trace = vm.count("trace") > 0;
  if (from_trace == (vm.count("prompt-ids") > 0)) {
    return Usage("give either --prompt-ids or --trace");
  }
  int64_t max_tokens = -1;
  if (vm.count("max-tokens")) {
    max_tokens = vm["max-tokens"].as<int64_t>();
    if (max_tokens < 0) return Usage(fmt::format("max-tokens = {}: must be >= 0", max_tokens));
  } else if (!from_trace) {
    return Usage("--max-tokens is required with --prompt-ids");
  }
  for (const char* key : {"trace.limit", "trace.offset"}) {
    if (vm[key].as<int64_t>() < 0) {
      return Usage(fmt::format("{} = {}: must be >= 0", key, vm[key].as<int64_t>()));
    }
  }
  const std::string spec = vm["model"].as<std::string>();
  auto loaded = model::LoadModel(spec, vm["seed"].as<uint64_t>());
  if (!loaded.ok()) {
    std::cerr << "mooncake generate: --model " << spec << ": " << loaded.status().ToString()
              << "\n";
    return loaded.status().code() == ErrorCode::kNotFound ? 2 : 1;
  }
  auto transformer = model::Transformer::Create(std::move(*loaded));
  if (!transformer.ok()) {
    std::cerr << "mooncake generate: --model " << spec << ": " << transformer.status().ToString()
              << "\n";
    return 1;
  }
  const int32_t vocab = transformer->config().vocab_size;
  std::vector<Prompt> prompts;
  if (from_trace) {
    trace::TraceReadOptions read;
    read.limit = static_cast<uint64_t>(vm["trace.limit"].as<int64_t>());
    read.offset = static_cast<uint64_t>(vm["trace.offset"].as<int64_t>());
    const std::string path = vm["trace"].as<std::string>();
    auto requests = trace::ReadTrace(path, read);
    if (!requests.ok()) return Usage("--trace " + path + ": " + requests.status().message());
    for (const trace::TraceRequest& r : *requests) {
      auto ids = model::PromptTokens(r.hash_ids, r.input_length, trace::kTraceBlockTokens, vocab);
      if (!ids.ok())
        return Usage(fmt::format("--trace {} line {}: {}", path, r.line, ids.status().message()));
      const int64_t n =
          max_tokens < 0 ? r.output_length : std::min<int64_t>(max_tokens, r.output_length);
      prompts.push_back({"request", static_cast<int64_t>(r.id.value), std::move(*ids), n});
    }
  } else {
    int64_t i = 0;
    for (const std::string& text : vm["prompt-ids"].as<std::vector<std::string>>()) {
      auto ids = ParseIds(text, vocab);
      if (!ids.ok()) return Usage(ids.status().message());
      prompts.push_back({"prompt", i++, std::move(*ids), max_tokens});
    }
  }
  // On stderr, so stdout stays one JSON object per prompt: which kernels computed them (the
  // serving job's summary names its own, and token identity needs the same).
  std::cerr << "mooncake generate: " << prompts.size() << " prompts, model " << spec << ", matmul "
            << model::MatmulBackend() << "\n";
  for (const Prompt& p : prompts) {
    model::GenerateOptions options;
    options.max_tokens = p.max_tokens;
    options.stop_at_eos = vm["stop-at-eos"].as<bool>();
    auto g = model::Generate(*transformer, p.ids, options);
    if (!g.ok()) {
      std::cerr << "mooncake generate: " << p.label << " " << p.index << ": "
                << g.status().ToString() << "\n";
      return 1;
    }
    nlohmann::json line = {
        {p.label, p.index}, {"input_length", p.ids.size()}, {"output_ids", g->output_ids}};
    if (vm["print-logits"].as<bool>()) line["prompt_logits"] = g->prompt_logits;
    std::cout << line.dump() << "\n";
  }
  return 0;
}

}  // namespace mooncake::engine
