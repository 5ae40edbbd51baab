#include "common/secret.h"

#include <sys/random.h>

namespace mooncake {

bool SecretEquals(std::span<const std::byte> a, std::span<const std::byte> b) {
  if (a.size() != b.size()) return false;
  volatile unsigned char diff = 0;  // volatile: the compiler may not stop at the first difference
  for (size_t i = 0; i < a.size(); ++i) {
    diff = diff | static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

bool SecretEquals(uint64_t a_hi, uint64_t a_lo, uint64_t b_hi, uint64_t b_lo) {
  volatile uint64_t diff = (a_hi ^ b_hi) | (a_lo ^ b_lo);
  return diff == 0;
}

uint64_t RandomWord() {
  uint64_t word = 0;
  size_t got = 0;
  while (got < sizeof word) {
    ssize_t n = getrandom(reinterpret_cast<char*>(&word) + got, sizeof word - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  return word;
}

namespace {
// SplitMix64's finaliser: a bijection on 64-bit words, so distinct inputs give distinct tokens.
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

TokenSource::TokenSource() : key_in_(RandomWord()), key_out_(RandomWord()) {}

uint64_t TokenSource::Next() {
  uint64_t token = 0;
  while (token == 0) token = Mix(Mix(++counter_ ^ key_in_) ^ key_out_);  // 0 means "none"
  return token;
}

}  // namespace mooncake
