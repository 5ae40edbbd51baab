// A hash map from 64-bit ids (block hashes, request ids) to small values, stored flat: open
// addressing with linear probing and backward-shift deletion, so that an insert allocates only
// when the table grows and a lookup touches one or two cache lines. The conductor's indexes do
// a few lookups per block of every request; std::unordered_map allocated a node per insert.
// Any 64-bit key is allowed. Pointers and references to values stay valid until the next insert
// or erase. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace mooncake::conductor {

template <typename V>
class FlatIdMap {
 public:
  size_t size() const { return size_ + (has_empty_key_ ? 1 : 0); }
  bool empty() const { return size() == 0; }

  const V* Find(uint64_t key) const {
    if (key == kEmpty) return has_empty_key_ ? &empty_key_value_ : nullptr;
    if (slots_.empty()) return nullptr;
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }
  V* Find(uint64_t key) { return const_cast<V*>(std::as_const(*this).Find(key)); }
  bool Contains(uint64_t key) const { return Find(key) != nullptr; }
  // Starts loading the slot where `key` would be: a caller about to look up several keys one
  // after the other overlaps their cache misses.
  void Prefetch(uint64_t key) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[Home(key)]);
  }

  // The value of `key`, inserted value-initialized when absent (then *inserted is true).
  V& FindOrInsert(uint64_t key, bool* inserted = nullptr) {
    if (inserted != nullptr) *inserted = false;
    if (key == kEmpty) {
      if (!has_empty_key_ && inserted != nullptr) *inserted = true;
      if (!has_empty_key_) empty_key_value_ = V{};
      has_empty_key_ = true;
      return empty_key_value_;
    }
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    size_t i = Home(key);
    for (; slots_[i].key != kEmpty; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return slots_[i].value;
    }
    if (inserted != nullptr) *inserted = true;
    slots_[i].key = key;
    slots_[i].value = V{};
    ++size_;
    return slots_[i].value;
  }

  // Returns whether `key` was there.
  bool Erase(uint64_t key) {
    if (key == kEmpty) {
      const bool had = has_empty_key_;
      has_empty_key_ = false;
      empty_key_value_ = V{};
      return had;
    }
    if (slots_.empty()) return false;
    size_t i = Home(key);
    for (; slots_[i].key != key; i = (i + 1) & mask_) {
      if (slots_[i].key == kEmpty) return false;
    }
    // Backward shift: move later entries of the probe run into the hole when that keeps them
    // reachable from their home slot, so that no tombstones are needed.
    for (size_t j = (i + 1) & mask_; slots_[j].key != kEmpty; j = (j + 1) & mask_) {
      const size_t home = Home(slots_[j].key);
      const bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      slots_[i] = std::move(slots_[j]);
      i = j;
    }
    slots_[i].key = kEmpty;
    slots_[i].value = V{};
    --size_;
    return true;
  }

  void Clear() {
    slots_.clear();
    mask_ = 0;
    shift_ = 64;
    size_ = 0;
    has_empty_key_ = false;
    empty_key_value_ = V{};
  }

  // Calls f(key, value) for every entry, in no particular order.
  template <typename F>
  void ForEach(F&& f) const {
    if (has_empty_key_) f(kEmpty, empty_key_value_);
    for (const Slot& s : slots_) {
      if (s.key != kEmpty) f(s.key, s.value);
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  struct Slot {
    uint64_t key = kEmpty;
    V value{};
  };

  // Fibonacci hashing: the top bits of key x 2^64/phi spread consecutive ids over the table.
  size_t Home(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);
  }

  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    const size_t capacity = old.empty() ? 16 : old.size() * 2;
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c >>= 1) --shift_;
    for (Slot& s : old) {
      if (s.key == kEmpty) continue;
      size_t i = Home(s.key);
      while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
      slots_[i] = std::move(s);
    }
  }

  std::vector<Slot> slots_;  // capacity a power of two, at most 3/4 full
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;  // entries in slots_
  // The one key that marks an empty slot lives outside the table.
  bool has_empty_key_ = false;
  V empty_key_value_{};
};

}  // namespace mooncake::conductor
