// Fuzzes the INI reader of preset files (engine/ini.h ParseIni) and its number getter. What
// parses must, written back as INI, parse to the same values.
#include <string>
#include <string_view>

#include "engine/ini.h"
#include "fuzz_check.h"

using namespace mooncake;

namespace {

// Text that ParseIni's trimming would change: it cannot have come from a section header.
bool Padded(const std::string& s) {
  auto pad = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  return !s.empty() && (pad(s.front()) || pad(s.back()));
}

// Where "section.key" can be split so that "[section]" and "key = ..." read back as `key`: a
// dot after the last '=' (only a section name holds '='), with a section name and a key that
// trimming leaves alone and a key that does not look like a header. npos: write it plainly
// (a key without '=' that is not such a split came from before any section).
size_t SectionSplit(const std::string& key) {
  const size_t eq = key.rfind('=');
  for (size_t dot = key.find('.', eq == std::string::npos ? 0 : eq); dot != std::string::npos;
       dot = key.find('.', dot + 1)) {
    const std::string section = key.substr(0, dot), rest = key.substr(dot + 1);
    if (section.empty() || Padded(section)) continue;
    if (!rest.empty() && (Padded(rest.substr(0, 1)) || rest[0] == '[')) continue;
    return dot;
  }
  return std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto values = engine::ParseIni(text, "fuzz.ini");
  if (!values.ok()) return 0;
  // Keys that cannot come from a section go first (before any header), then each
  // "section.key" under its own header (SectionSplit).
  std::string plain, sectioned;
  for (const auto& [key, value] : *values) {
    (void)engine::IniNumber(*values, key, "fuzz.ini");
    MC_FUZZ_CHECK(key.find_first_of("\n#;") == std::string::npos, "key holds a separator");
    MC_FUZZ_CHECK(value.find_first_of("\n#;") == std::string::npos, "value holds a separator");
    const size_t dot = SectionSplit(key);
    if (dot == std::string::npos) {
      plain += key + " = " + value + "\n";
    } else {
      sectioned += "[" + key.substr(0, dot) + "]\n" + key.substr(dot + 1) + " = " + value + "\n";
    }
  }
  std::string written = plain + sectioned;
  auto again = engine::ParseIni(written, "fuzz.ini");
  MC_FUZZ_CHECK(again.ok(), "written INI does not parse");
  MC_FUZZ_CHECK(*again == *values, "INI round trip");
  return 0;
}
