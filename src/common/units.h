// Explicit units for sizes and durations: "2GiB", "64KiB", "1.5GB", "100ms", "30s", "250us".
// Binary suffixes (KiB, MiB, GiB, TiB) are powers of 1024; decimal ones (KB, MB, GB, TB) powers
// of 1000; a bare number of bytes is allowed. Durations need a unit: ns, us, ms, s, min, h.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace mooncake {

Result<uint64_t> ParseBytes(std::string_view text);
Result<std::chrono::nanoseconds> ParseDuration(std::string_view text);

// "1.50 GiB", "64.0 KiB", "512 B": for tables and logs.
std::string FormatBytes(uint64_t bytes);
// "1.234 ms", "12.0 s".
std::string FormatDuration(std::chrono::nanoseconds d);
// Always in seconds with two decimals ("0.40 s"): the membership's failure messages, which
// operators and the fault tests read at one fixed unit.
std::string FormatSeconds(std::chrono::nanoseconds d);

inline constexpr uint64_t kKiB = 1024;
inline constexpr uint64_t kMiB = 1024 * kKiB;
inline constexpr uint64_t kGiB = 1024 * kMiB;

}  // namespace mooncake
