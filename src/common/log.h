// Minimal leveled logging to stderr, prefixed with the process's rank tag ("[r3 store] ").
// The tag and level are set once by src/app; library code only calls the functions.
// Thread-safe: each line is written with one fwrite.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace mooncake::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

void SetLevel(Level level);
Level GetLevel();
void SetTag(std::string tag);
void Write(Level level, std::string_view message);

template <typename... Args>
void Debug(fmt::format_string<Args...> f, Args&&... args) {
  if (GetLevel() <= Level::kDebug)
    Write(Level::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Info(fmt::format_string<Args...> f, Args&&... args) {
  if (GetLevel() <= Level::kInfo) Write(Level::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Warn(fmt::format_string<Args...> f, Args&&... args) {
  if (GetLevel() <= Level::kWarn) Write(Level::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void Error(fmt::format_string<Args...> f, Args&&... args) {
  if (GetLevel() <= Level::kError)
    Write(Level::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace mooncake::log
