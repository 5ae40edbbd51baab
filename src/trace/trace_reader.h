// Streaming reader and validator of Mooncake JSONL traces.
//
// Every line is validated: bad JSON, a missing or mistyped field, a negative length,
// len(hash_ids) != ceil(input_length / 512), or a timestamp smaller than the previous valid
// line's. A bad line is an InvalidArgument error "FILE:LINE: field: what" unless skip_invalid is
// set, in which case it is counted and skipped. Blank lines are ignored.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "trace/trace_request.h"

namespace mooncake::trace {

struct TraceReadOptions {
  uint64_t offset = 0;        // valid requests to skip before the first one returned
  uint64_t limit = 0;         // maximum requests returned; 0 = all
  bool skip_invalid = false;  // count and skip bad lines instead of failing
};

struct TraceReadStats {
  uint64_t lines = 0;     // lines read (including blank and skipped ones)
  uint64_t skipped = 0;   // invalid lines skipped (skip_invalid only)
  uint64_t returned = 0;  // requests returned
  uint64_t valid = 0;     // valid requests read, those the offset skipped included
};

// Parses and validates one line. `file` and `line_no` only label the error.
Result<TraceRequest> ParseTraceLine(std::string_view text, std::string_view file, int64_t line_no);

class TraceReader {
 public:
  static Result<TraceReader> Open(const std::string& path, TraceReadOptions options);

  // The next request, std::nullopt at the end (or when the limit is reached), or an error.
  Result<std::optional<TraceRequest>> Next();
  const TraceReadStats& stats() const { return stats_; }

 private:
  TraceReader(std::string path, TraceReadOptions options, std::unique_ptr<std::ifstream> in)
      : path_(std::move(path)), options_(options), in_(std::move(in)) {}

  std::string path_;
  TraceReadOptions options_;
  std::unique_ptr<std::ifstream> in_;
  TraceReadStats stats_;
  int64_t last_timestamp_ = 0;
  std::string line_;
};

// Reads a whole trace (with offset and limit) into memory.
Result<std::vector<TraceRequest>> ReadTrace(const std::string& path, TraceReadOptions options,
                                            TraceReadStats* stats = nullptr);

// One request as a Mooncake JSONL line (no newline): what ParseTraceLine reads back.
std::string FormatTraceLine(const TraceRequest& request);

// Writes requests as Mooncake JSONL (timestamp, input_length, output_length, hash_ids).
Status WriteTraceJsonl(const std::string& path, const std::vector<TraceRequest>& requests);

}  // namespace mooncake::trace
