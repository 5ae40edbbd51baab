// Comparing secrets (job tokens, listener credentials) and drawing unguessable numbers.
//
// A comparison that returns at the first differing byte tells a caller who can time it how much
// of a guess was right; these take the same time whatever the contents (only the lengths, which
// are not secret, may end them early).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace mooncake {

// True when a and b hold the same bytes; time independent of where they differ.
bool SecretEquals(std::span<const std::byte> a, std::span<const std::byte> b);
bool SecretEquals(uint64_t a_hi, uint64_t a_lo, uint64_t b_hi, uint64_t b_lo);

// 64 bits from the kernel's random source (getrandom): for seeds and keys, not hot paths.
uint64_t RandomWord();

// Unguessable 64-bit tokens without a system call each: a keyed mix (SplitMix64's finaliser
// over a counter XORed with a random key, then keyed again) of a counter, so tokens never repeat
// within 2^64 draws and a process that has not seen the key cannot name one that is in use.
// Not a cryptographic generator: it keeps out guessing (tokens 1, 2, 3 ...), not a party that
// reads the traffic. Not thread-safe: callers hold their own lock.
class TokenSource {
 public:
  TokenSource();
  uint64_t Next();

 private:
  uint64_t key_in_, key_out_, counter_ = 0;
};

}  // namespace mooncake
