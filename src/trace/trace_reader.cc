#include "trace/trace_reader.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace mooncake::trace {
namespace {

Status LineError(std::string_view file, int64_t line, std::string_view field,
                 std::string_view what) {
  return InvalidArgument(fmt::format("{}:{}: {}: {}", file, line, field, what));
}

// Reads an integer field; fails when missing, not an integer, or negative.
Status ReadNonNegative(const nlohmann::json& obj, const char* key, std::string_view file,
                       int64_t line, int64_t* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return LineError(file, line, key, "missing");
  if (!it->is_number_integer()) return LineError(file, line, key, "not an integer");
  int64_t v = it->get<int64_t>();
  if (v < 0) return LineError(file, line, key, fmt::format("negative ({})", v));
  *out = v;
  return Status::Ok();
}

}  // namespace

Result<TraceRequest> ParseTraceLine(std::string_view text, std::string_view file, int64_t line_no) {
  nlohmann::json obj = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (obj.is_discarded()) return LineError(file, line_no, "json", "not valid JSON");
  if (!obj.is_object()) return LineError(file, line_no, "json", "not a JSON object");
  TraceRequest r;
  r.line = line_no;
  int64_t ts = 0, in = 0, out = 0;
  MC_RETURN_IF_ERROR(ReadNonNegative(obj, "timestamp", file, line_no, &ts));
  MC_RETURN_IF_ERROR(ReadNonNegative(obj, "input_length", file, line_no, &in));
  MC_RETURN_IF_ERROR(ReadNonNegative(obj, "output_length", file, line_no, &out));
  if (in > INT32_MAX) return LineError(file, line_no, "input_length", "too large");
  if (out > INT32_MAX) return LineError(file, line_no, "output_length", "too large");
  r.timestamp_ms = ts;
  r.input_length = static_cast<int32_t>(in);
  r.output_length = static_cast<int32_t>(out);
  auto it = obj.find("hash_ids");
  if (it == obj.end()) return LineError(file, line_no, "hash_ids", "missing");
  if (!it->is_array()) return LineError(file, line_no, "hash_ids", "not an array");
  r.hash_ids.reserve(it->size());
  for (const auto& h : *it) {
    if (!h.is_number_integer() || h.get<int64_t>() < 0) {
      return LineError(file, line_no, "hash_ids",
                       "holds a value that is not a non-negative integer");
    }
    r.hash_ids.push_back(BlockHash{h.get<uint64_t>()});
  }
  const int64_t want = (in + kTraceBlockTokens - 1) / kTraceBlockTokens;
  if (static_cast<int64_t>(r.hash_ids.size()) != want) {
    return LineError(file, line_no, "hash_ids",
                     fmt::format("has {} ids but input_length {} needs ceil({}/{}) = {}",
                                 r.hash_ids.size(), in, in, kTraceBlockTokens, want));
  }
  return r;
}

Result<TraceReader> TraceReader::Open(const std::string& path, TraceReadOptions options) {
  auto in = std::make_unique<std::ifstream>(path);
  if (!in->is_open()) return NotFound(fmt::format("{}: cannot open trace file", path));
  return TraceReader(path, options, std::move(in));
}

Result<std::optional<TraceRequest>> TraceReader::Next() {
  while (true) {
    if (options_.limit != 0 && stats_.returned >= options_.limit) {
      return std::optional<TraceRequest>();
    }
    if (!std::getline(*in_, line_)) {
      if (in_->bad()) return IoError(fmt::format("{}:{}: read failed", path_, stats_.lines + 1));
      return std::optional<TraceRequest>();
    }
    ++stats_.lines;
    const auto line_no = static_cast<int64_t>(stats_.lines);
    if (line_.find_first_not_of(" \t\r") == std::string::npos) continue;
    Result<TraceRequest> parsed = ParseTraceLine(line_, path_, line_no);
    Status status = parsed.ok() ? Status::Ok() : parsed.status();
    if (status.ok() && stats_.valid > 0 && parsed->timestamp_ms < last_timestamp_) {
      status =
          LineError(path_, line_no, "timestamp",
                    fmt::format("decreases ({} after {})", parsed->timestamp_ms, last_timestamp_));
    }
    if (!status.ok()) {
      if (!options_.skip_invalid) return status;
      ++stats_.skipped;
      continue;
    }
    last_timestamp_ = parsed->timestamp_ms;
    ++stats_.valid;
    if (stats_.valid <= options_.offset) continue;
    TraceRequest r = std::move(parsed).value();
    r.id = RequestId{stats_.returned};
    ++stats_.returned;
    return std::optional<TraceRequest>(std::move(r));
  }
}

Result<std::vector<TraceRequest>> ReadTrace(const std::string& path, TraceReadOptions options,
                                            TraceReadStats* stats) {
  Result<TraceReader> reader = TraceReader::Open(path, options);
  if (!reader.ok()) return reader.status();
  std::vector<TraceRequest> out;
  while (true) {
    Result<std::optional<TraceRequest>> next = reader->Next();
    if (!next.ok()) return next.status();
    if (!next->has_value()) break;
    out.push_back(std::move(**next));
  }
  if (stats != nullptr) *stats = reader->stats();
  return out;
}

std::string FormatTraceLine(const TraceRequest& r) {
  std::string line = fmt::format(
      "{{\"timestamp\": {}, \"input_length\": {}, \"output_length\": {}, \"hash_ids\": [",
      r.timestamp_ms, r.input_length, r.output_length);
  for (size_t i = 0; i < r.hash_ids.size(); ++i) {
    if (i > 0) line += ", ";
    line += std::to_string(r.hash_ids[i].value);
  }
  line += "]}";
  return line;
}

Status WriteTraceJsonl(const std::string& path, const std::vector<TraceRequest>& requests) {
  std::ofstream out(path);
  if (!out.is_open()) return IoError(fmt::format("{}: cannot open for writing", path));
  for (const TraceRequest& r : requests) out << FormatTraceLine(r) << '\n';
  out.flush();
  if (!out) return IoError(fmt::format("{}: write failed", path));
  return Status::Ok();
}

}  // namespace mooncake::trace
