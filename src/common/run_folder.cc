#include "common/run_folder.h"

#include <filesystem>
#include <fstream>

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
  std::string final_path = path_ + "/" + name;
  std::string tmp = final_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError("cannot write " + tmp);
    out << text;
    if (!out.flush()) return IoError("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, final_path, ec);
  if (ec) return IoError("cannot rename " + tmp + ": " + ec.message());
  return Status::Ok();
}

}  // namespace mooncake
