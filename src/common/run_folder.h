// The run folder: where a job writes summary.json, CSVs and plots (DESIGN.md "Metrics").
#pragma once

#include <string>

#include "common/status.h"

namespace mooncake {

class RunFolder {
 public:
  // Creates `dir` (and parents); an empty `dir` means runs/<UTC timestamp>.
  static Result<RunFolder> Create(const std::string& dir);
  const std::string& path() const { return path_; }
  // Writes `name` inside the folder atomically (temp file + rename).
  Status WriteText(const std::string& name, const std::string& text) const;

 private:
  explicit RunFolder(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace mooncake
