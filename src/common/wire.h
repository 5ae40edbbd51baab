// Bounds-checked encoding of wire messages (little-endian, fixed-width fields).
//
// WireWriter appends to a byte vector. WireReader never reads past the end of its buffer: every
// getter returns false once the buffer is exhausted, and the reader stays failed, so a decoder can
// read all fields and check ok() once at the end. Strings and byte blobs are length-prefixed
// (uint32) and their length is checked against what remains before any copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace mooncake {

class WireWriter {
 public:
  template <typename T>
  requires std::is_trivially_copyable_v<T> && std::is_arithmetic_v<T>
  void Put(T value) {
    size_t at = buf_.size();
    buf_.resize(at + sizeof(T));
    std::memcpy(buf_.data() + at, &value, sizeof(T));
  }
  void PutBytes(std::span<const std::byte> bytes) {
    Put<uint32_t>(static_cast<uint32_t>(bytes.size()));
    buf_.insert(buf_.end(), bytes.begin(), bytes.end());
  }
  void PutString(std::string_view s) {
    PutBytes(std::as_bytes(std::span<const char>(s.data(), s.size())));
  }
  // Room for `bytes` more without reallocating (a writer that knows its message's size).
  void Reserve(size_t bytes) { buf_.reserve(buf_.size() + bytes); }
  const std::vector<std::byte>& bytes() const { return buf_; }
  std::vector<std::byte> Take() { return std::move(buf_); }

 private:
  std::vector<std::byte> buf_;
};

class WireReader {
 public:
  explicit WireReader(std::span<const std::byte> data) : data_(data) {}

  template <typename T>
  requires std::is_trivially_copyable_v<T> && std::is_arithmetic_v<T>
  bool Get(T* out) {
    if (!ok_ || data_.size() - pos_ < sizeof(T)) return Fail();
    std::memcpy(out, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  // Returns a view into the buffer (valid while the buffer lives); `max_len` caps what a peer
  // may claim, so a corrupt length cannot make us allocate gigabytes.
  bool GetBytes(std::span<const std::byte>* out, uint32_t max_len = UINT32_MAX) {
    uint32_t len = 0;
    if (!Get(&len)) return false;
    if (len > max_len || data_.size() - pos_ < len) return Fail();
    *out = data_.subspan(pos_, len);
    pos_ += len;
    return true;
  }
  bool GetString(std::string* out, uint32_t max_len = 1 << 20) {
    std::span<const std::byte> bytes;
    if (!GetBytes(&bytes, max_len)) return false;
    out->assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return true;
  }

  // Marks the input malformed (a decoder found a value it cannot accept).
  void MarkMalformed() { ok_ = false; }
  bool ok() const { return ok_; }
  size_t remaining() const { return ok_ ? data_.size() - pos_ : 0; }
  // True when every byte was consumed and no read failed: decoders call this last, so trailing
  // garbage is rejected as well as truncation.
  bool done() const { return ok_ && pos_ == data_.size(); }

 private:
  bool Fail() {
    ok_ = false;
    return false;
  }
  std::span<const std::byte> data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace mooncake
