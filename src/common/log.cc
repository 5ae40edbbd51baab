#include "common/log.h"

#include <atomic>
#include <cstdio>
#include <mutex>

#include "common/enum_names.h"

namespace mooncake::log {
namespace {

std::atomic<Level> g_level{Level::kInfo};
std::mutex g_tag_mutex;
std::string g_tag;  // guarded by g_tag_mutex

const char* LevelName(Level level) {
  static constexpr EnumName<Level> kLevels[] = {{Level::kDebug, "debug"},
                                                {Level::kInfo, "info"},
                                                {Level::kWarn, "warn"},
                                                {Level::kError, "error"},
                                                {Level::kOff, "off"}};
  return NameIn(kLevels, level, "?");
}

}  // namespace

void SetLevel(Level level) { g_level.store(level); }
Level GetLevel() { return g_level.load(std::memory_order_relaxed); }

void SetTag(std::string tag) {
  std::lock_guard<std::mutex> lock(g_tag_mutex);
  g_tag = std::move(tag);
}

void Write(Level level, std::string_view message) {
  std::string line;
  {
    std::lock_guard<std::mutex> lock(g_tag_mutex);
    line = g_tag.empty() ? std::string() : "[" + g_tag + "] ";
  }
  line += LevelName(level);
  line += ": ";
  line += message;
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace mooncake::log
