// The wall clock in UTC as text: run folder names, the date a calibration was taken.
#pragma once

#include <string>

namespace mooncake {

// The current time in UTC through strftime's `format` ("runs/%Y%m%d-%H%M%S"); empty when the
// result would not fit in 63 bytes.
std::string FormatUtcNow(const char* format);

}  // namespace mooncake
