// Run-folder outputs: requests.csv, summary.json and a short stdout table.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "trace/metrics.h"

namespace mooncake::trace {

// Header + one row per record, in the order given. Numbers use fixed formats, so equal records
// give byte-identical files.
std::string RequestsCsv(const std::vector<RequestRecord>& records);

// summary.json text. Top level always has "requests": {"total","completed","rejected","lost"}.
std::string SummaryJson(const Summary& summary);

// A few lines for stdout: counts, TTFT/TBT, capacity, hit rate.
std::string SummaryTable(const Summary& summary);

// Creates `dir` (and parents) and writes requests.csv and summary.json into it.
Status WriteRunFolder(const std::string& dir, const std::vector<RequestRecord>& records,
                      const Summary& summary);

Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace mooncake::trace
