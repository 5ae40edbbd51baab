// A tiny INI reader for preset files: "[section]" headers, "key = value" lines, '#' or ';'
// comments. Keys come back as "section.key" (or "key" before any section).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace mooncake::engine {

using IniValues = std::map<std::string, std::string>;

// `source` names the text in errors: "configs/models/x.ini:3: expected key = value".
Result<IniValues> ParseIni(std::string_view text, std::string_view source);
Result<IniValues> ReadIniFile(const std::string& path);

// Typed getters that name the file and key in their errors.
Result<double> IniNumber(const IniValues& v, const std::string& key, std::string_view source);

}  // namespace mooncake::engine
