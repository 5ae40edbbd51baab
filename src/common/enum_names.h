// One table per enum for its names: the name of a value and the value of a name come from the
// same list, so they cannot drift apart (and no switch repeats them).
//
//   constexpr EnumName<Color> kColors[] = {{Color::kRed, "red"}, {Color::kBlue, "blue"}};
//   NameIn(kColors, Color::kRed)              -> "red"
//   ParseIn(kColors, "blue", "paint.color")   -> Color::kBlue
//   ParseIn(kColors, "pink", "paint.color")   -> InvalidArgument
//        "paint.color: 'pink' is not one of red, blue"
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace mooncake {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `value`, or `fallback` for a value the table does not list.
template <typename E, size_t N>
constexpr const char* NameIn(const EnumName<E> (&table)[N], E value,
                             const char* fallback = "unknown") {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name;
  }
  return fallback;
}

// The value named `text`; InvalidArgument naming `option` and every accepted name otherwise.
template <typename E, size_t N>
Result<E> ParseIn(const EnumName<E> (&table)[N], std::string_view text, std::string_view option) {
  std::string names;
  for (const auto& entry : table) {
    if (text == entry.name) return entry.value;
    names += (names.empty() ? "" : ", ") + std::string(entry.name);
  }
  return InvalidArgument(std::string(option) + ": '" + std::string(text) + "' is not one of " +
                         names);
}

}  // namespace mooncake
