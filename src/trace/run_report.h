// Run-folder outputs: requests.csv, summary.json and a short stdout table.
#pragma once

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "trace/metrics.h"

namespace mooncake::trace {

// Header + one row per record, in the order given. Numbers use fixed formats, so equal records
// give byte-identical files.
std::string RequestsCsv(const std::vector<RequestRecord>& records);

// requests.csv written as requests finish (appended and flushed row by row), so a job that ends
// abnormally keeps what it measured. WriteRunFolder rewrites the file in id order at the end.
class RequestLog {
 public:
  static Result<std::unique_ptr<RequestLog>> Open(const std::string& path);
  RequestLog(const RequestLog&) = delete;
  RequestLog& operator=(const RequestLog&) = delete;
  void Append(const RequestRecord& record);  // any thread

 private:
  explicit RequestLog(std::FILE* file) : file_(file, &std::fclose) {}
  std::mutex mutex_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
};

// summary.json text. Top level always has "requests":
// {"total","completed","rejected","lost","failed"}.
std::string SummaryJson(const Summary& summary);

// A few lines for stdout: counts, TTFT/TBT, capacity, hit rate.
std::string SummaryTable(const Summary& summary);

// Creates `dir` (and parents) and writes requests.csv and summary.json into it.
Status WriteRunFolder(const std::string& dir, const std::vector<RequestRecord>& records,
                      const Summary& summary);

Status WriteTextFile(const std::string& path, const std::string& text);

// What produced a run folder, for plot titles and for the reader: run.json with the command
// ("mooncake" or "mooncake eval"), the trace ("synthetic" when generated), the config file
// ("" without one), the system and the prefill policy.
struct RunInfo {
  std::string command, trace, config, system, policy;
};
Status WriteRunInfo(const std::string& dir, const RunInfo& info);

}  // namespace mooncake::trace
