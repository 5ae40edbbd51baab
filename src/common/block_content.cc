#include "common/block_content.h"

#include <cstring>

#include "common/checksum.h"

namespace mooncake {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t Seed(const BlockContentKey& key) {
  return SplitMix64(key.hash_id ^ SplitMix64(key.model_tag ^ (uint64_t{key.layer} << 40)));
}

}  // namespace

void FillBlockContent(const BlockContentKey& key, std::span<std::byte> out) {
  const uint64_t seed = Seed(key);
  size_t words = out.size() / 8;
  auto* p = out.data();
  for (size_t i = 0; i < words; ++i) {
    uint64_t v = SplitMix64(seed + i);
    std::memcpy(p + i * 8, &v, 8);
  }
  if (size_t tail = out.size() % 8; tail != 0) {
    uint64_t v = SplitMix64(seed + words);
    std::memcpy(p + words * 8, &v, tail);
  }
}

bool VerifyBlockContent(const BlockContentKey& key, std::span<const std::byte> data) {
  const uint64_t seed = Seed(key);
  size_t words = data.size() / 8;
  const auto* p = data.data();
  for (size_t i = 0; i < words; ++i) {
    uint64_t v;
    std::memcpy(&v, p + i * 8, 8);
    if (v != SplitMix64(seed + i)) return false;
  }
  if (size_t tail = data.size() % 8; tail != 0) {
    uint64_t v = SplitMix64(seed + words);
    if (std::memcmp(&v, p + words * 8, tail) != 0) return false;
  }
  return true;
}

uint64_t BlockContentSeed(const BlockContentKey& key) { return Seed(key); }

uint64_t ModelTag(const char* model_name) {
  return Checksum64(model_name, std::strlen(model_name));
}

}  // namespace mooncake
