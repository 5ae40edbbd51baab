// A unique scratch folder for one test: made by mkdtemp under $TMPDIR (else /tmp) and removed,
// with everything in it, when the object goes out of scope, also when the test failed. No test
// uses a fixed name, so parallel runs (ctest -j) and leftovers of a crash cannot collide.
#pragma once

#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace mooncake::test_support {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag = "mooncake-test") {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + tag + "-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + tmpl);
    path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// One folder for a whole test binary (removed at its normal exit), for helpers that hand out
// paths by name.
inline ScratchDir& BinaryScratchDir() {
  static ScratchDir dir("mooncake-test");
  return dir;
}

}  // namespace mooncake::test_support
