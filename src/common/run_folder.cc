#include "common/run_folder.h"

#include <filesystem>

#include "common/replace_file.h"
#include "common/utc_time.h"

namespace mooncake {

Result<RunFolder> RunFolder::Create(const std::string& dir) {
  std::string path = dir;
  if (path.empty()) path = FormatUtcNow("runs/%Y%m%d-%H%M%S");
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return IoError("cannot create run folder " + path + ": " + ec.message());
  return RunFolder(path);
}

Status RunFolder::WriteText(const std::string& name, const std::string& text) const {
  return ReplaceFile(path_ + "/" + name, text);
}

}  // namespace mooncake
