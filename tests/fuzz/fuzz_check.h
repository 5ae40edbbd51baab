// Shared helpers of the fuzz targets: the input as bytes, and a check that crashes the target
// (so libFuzzer saves the input) when a decoded value does not survive its round trip.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>

#include "common/wire_fields.h"

namespace mooncake::fuzz {

inline std::span<const std::byte> AsBytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

// A meaning bug, not a memory bug: print what broke and trap so the input is kept.
#define MC_FUZZ_CHECK(cond, what)                                        \
  do {                                                                   \
    if (!(cond)) {                                                       \
      std::fprintf(stderr, "fuzz check failed: %s (%s)\n", what, #cond); \
      __builtin_trap();                                                  \
    }                                                                    \
  } while (0)

inline bool SameBytes(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// The wire format is canonical (fixed widths, counts, bools 0/1, no padding): a message that
// decodes must re-encode to exactly the bytes it came from.
template <typename M, typename DecodeFn>
void WireRoundTrip(std::span<const std::byte> in, DecodeFn decode) {
  M message;
  if (!decode(in, &message)) return;
  std::vector<std::byte> again = WireEncode(message);
  MC_FUZZ_CHECK(SameBytes(again, in), M::kWireName);
}

}  // namespace mooncake::fuzz
