// A set of piece indices [0, size) as a bitmap: which pieces of an object a rank holds, is
// fetching, or must not read from a holder. Value type; not thread-safe.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mooncake::p2p {

class PieceSet {
 public:
  PieceSet() = default;
  explicit PieceSet(size_t size) : size_(size), words_((size + 63) / 64, 0) {}

  size_t size() const { return size_; }
  bool Test(size_t i) const { return i < size_ && (words_[i / 64] >> (i % 64)) & 1u; }
  // Returns true when `i` was not in the set before. Indices outside [0, size) are ignored.
  bool Insert(size_t i) {
    if (i >= size_ || Test(i)) return false;
    words_[i / 64] |= uint64_t{1} << (i % 64);
    ++count_;
    return true;
  }
  bool Erase(size_t i) {
    if (!Test(i)) return false;
    words_[i / 64] &= ~(uint64_t{1} << (i % 64));
    --count_;
    return true;
  }
  void InsertAll() {
    for (size_t i = 0; i < size_; ++i) Insert(i);
  }
  size_t count() const { return count_; }
  bool full() const { return count_ == size_; }
  bool empty() const { return count_ == 0; }

 private:
  size_t size_ = 0;
  size_t count_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace mooncake::p2p
