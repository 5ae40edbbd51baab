#include "common/utc_time.h"

#include <ctime>

namespace mooncake {

std::string FormatUtcNow(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[64];
  if (std::strftime(text, sizeof(text), format, &tm) == 0) return "";
  return text;
}

}  // namespace mooncake
