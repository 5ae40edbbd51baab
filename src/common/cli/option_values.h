// Checks of option values after Boost stored them as text: each error is one line that names the
// option, the value and what is allowed ("store.dram = '3x': ...", "... is out of range (allowed
// 1.00 MiB to 1.00 TiB)"), for the usage error (exit 2) of the command that parses them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "common/clock.h"
#include "common/log.h"
#include "common/status.h"

namespace mooncake::cli {

// A size with its unit ("64MiB") within [lo, hi] bytes.
Status SizeOption(const char* name, const std::string& value, uint64_t lo, uint64_t hi,
                  uint64_t* out);

// A duration with its unit ("100ms") within [lo, hi].
Status DurationOption(const char* name, const std::string& value, Nanos lo, Nanos hi, Nanos* out);

// A whole number within [lo, hi], into *out (a narrower type); else "name = v (allowed lo to hi)".
template <typename T, typename Out>
Status IntOption(const char* name, T value, T lo, T hi, Out* out) {
  if (value < lo || value > hi) {
    return OutOfRange(std::string(name) + " = " + std::to_string(value) + " (allowed " +
                      std::to_string(lo) + " to " + std::to_string(hi) + ")");
  }
  *out = static_cast<Out>(value);
  return Status::Ok();
}

// "off" (-1) or a TCP port 0..65535 (0: any free one).
Status PortOption(const char* name, const std::string& value, int* out);

// One of the words of `choices`, as its value; else "name = 'value' (allowed: a, b, c)".
template <typename T>
Status ChoiceOption(const char* name, const std::string& value,
                    std::initializer_list<std::pair<const char*, T>> choices, T* out) {
  std::string allowed;
  for (const auto& [word, choice] : choices) {
    if (value == word) {
      *out = choice;
      return Status::Ok();
    }
    allowed += (allowed.empty() ? "" : ", ") + std::string(word);
  }
  return InvalidArgument(std::string(name) + " = '" + value + "' (allowed: " + allowed + ")");
}

// "on" or "off".
Status OnOffOption(const char* name, const std::string& value, bool* out);

// log-level: debug | info | warn | error (the main command and `mooncake p2p` share it).
Status ParseLogLevel(const std::string& word, log::Level* level);

}  // namespace mooncake::cli
