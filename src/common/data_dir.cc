#include "common/data_dir.h"

#include <filesystem>

#ifndef MOONCAKE_SOURCE_DIR
#define MOONCAKE_SOURCE_DIR "."
#endif

namespace mooncake {

std::string DataDir(const std::string& name) {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed =
        exe.parent_path().parent_path() / "share" / "mooncake" / name;
    if (std::filesystem::is_directory(installed, ec)) return installed.string();
  }
  return std::string(MOONCAKE_SOURCE_DIR) + "/" + name;
}

std::string ThisBinary() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "mooncake" : exe.string();
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

}  // namespace mooncake
