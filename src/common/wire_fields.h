// Wire messages that declare their fields once. A message lists its fields in one static
// function, and WireEncode / WireDecode walk that list both ways, so a field added to the list
// is written and read in the same place and order:
//
//   struct KvOffer {
//     uint64_t request = 0;
//     uint64_t bytes = 0;
//     MC_WIRE_FIELDS(request, bytes)
//   };
//   std::vector<std::byte> bytes = WireEncode(offer);
//   Result<KvOffer> back = WireDecode<KvOffer>(bytes, "KvOffer");
//
// Field types: arithmetic values and enums (fixed size), std::chrono durations (int64 count),
// std::string, std::vector of any field type (count-prefixed; bytes in one piece), and nested
// structs with their own Fields. Decoding is bounds-checked
// throughout: a count can never claim more elements than bytes remain, truncated or trailing
// input fails, and a message with `Status Validate() const` is validated after decoding.
//
// MC_WIRE_FIELDS(a, b, ...) writes the list: `static void Fields(Self& self, Visit&& visit)`
// calling visit(self.a, self.b, ...), so the compiler checks every name and the wire order is the
// order written there (up to 64 fields). MC_WIRE_MESSAGE(Name, a, b, ...) adds the name that
// errors give the message (kWireName = "Name"), for a message sent on its own. Rank (common/ids.h,
// which this header's includes sit above) writes the same function by hand.
#pragma once

#include <boost/preprocessor/punctuation/comma_if.hpp>
#include <boost/preprocessor/seq/for_each_i.hpp>
#include <boost/preprocessor/variadic/to_seq.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/wire.h"

#define MC_WIRE_SELF_FIELD(r, self, i, field) BOOST_PP_COMMA_IF(i) self.field
#define MC_WIRE_FIELDS(...)                                                                        \
  template <typename Self, typename Visit>                                                         \
  static void Fields(Self& self, Visit&& visit) {                                                  \
    visit(                                                                                         \
        BOOST_PP_SEQ_FOR_EACH_I(MC_WIRE_SELF_FIELD, self, BOOST_PP_VARIADIC_TO_SEQ(__VA_ARGS__))); \
  }

#define MC_WIRE_MESSAGE(name, ...)                \
  static constexpr const char* kWireName = #name; \
  MC_WIRE_FIELDS(__VA_ARGS__)

namespace mooncake {
namespace wire_fields {

template <typename T>
concept HasFields = requires(T& t) {
  T::Fields(t, [](auto&...) {});
};

template <typename T>
concept ByteLike = std::is_same_v<T, std::byte> || std::is_same_v<T, uint8_t>;

template <typename T>
struct IsDuration : std::false_type {};
template <typename Rep, typename Period>
struct IsDuration<std::chrono::duration<Rep, Period>> : std::true_type {};

template <typename T>
void Put(WireWriter& w, const T& value);
template <typename T>
void Get(WireReader& r, T* value);

inline void Put(WireWriter& w, const std::string& value) { w.PutString(value); }

inline void Get(WireReader& r, std::string* value) { r.GetString(value); }

template <typename T>
void Put(WireWriter& w, const std::vector<T>& values) {
  if constexpr (ByteLike<T>) {
    w.PutBytes(std::as_bytes(std::span<const T>(values)));
  } else {
    w.Put<uint32_t>(static_cast<uint32_t>(values.size()));
    for (const T& v : values) Put(w, v);
  }
}

template <typename T>
void Put(WireWriter& w, const T& value) {
  if constexpr (HasFields<T>) {
    T::Fields(value, [&w](const auto&... fields) { (Put(w, fields), ...); });
  } else if constexpr (std::is_enum_v<T>) {
    w.Put(static_cast<std::underlying_type_t<T>>(value));
  } else if constexpr (std::is_same_v<T, bool>) {
    w.Put<uint8_t>(value ? 1 : 0);
  } else if constexpr (IsDuration<T>::value) {
    w.Put<int64_t>(static_cast<int64_t>(value.count()));
  } else {
    static_assert(std::is_arithmetic_v<T>, "a wire field is a number, string, vector or struct");
    w.Put(value);
  }
}

template <typename T>
void Get(WireReader& r, std::vector<T>* values) {
  if constexpr (ByteLike<T>) {
    std::span<const std::byte> bytes;
    if (!r.GetBytes(&bytes)) return;
    values->resize(bytes.size());
    if (!bytes.empty()) std::memcpy(values->data(), bytes.data(), bytes.size());
    return;
  }
  uint32_t n = 0;
  // Every element takes at least one byte: a count larger than what remains is a lie.
  if (!r.Get(&n) || n > r.remaining()) {
    r.MarkMalformed();
    return;
  }
  values->resize(n);
  for (T& v : *values) {
    Get(r, &v);
    if (!r.ok()) return;
  }
}

template <typename T>
void Get(WireReader& r, T* value) {
  if constexpr (HasFields<T>) {
    T::Fields(*value, [&r](auto&... fields) { (Get(r, &fields), ...); });
  } else if constexpr (std::is_enum_v<T>) {
    std::underlying_type_t<T> raw{};
    r.Get(&raw);
    *value = static_cast<T>(raw);
  } else if constexpr (std::is_same_v<T, bool>) {
    uint8_t raw = 0;  // a bool is one byte, 0 or 1: anything else is malformed
    if (r.Get(&raw) && raw > 1) r.MarkMalformed();
    *value = raw == 1;
  } else if constexpr (IsDuration<T>::value) {
    int64_t count = 0;
    r.Get(&count);
    *value = T(count);
  } else {
    r.Get(value);
  }
}

}  // namespace wire_fields

// The member spelling of WireEncode / WireDecode for a message M that derives from
// WireMessage<M> and names itself in `static constexpr const char* kWireName`.
template <typename M>
struct WireMessage {
  std::vector<std::byte> Encode() const;
  static Result<M> Decode(std::span<const std::byte> bytes);
};

// A message with no fields: the request of a call that asks nothing more than its id, the answer
// that only says done. It decodes from zero bytes and nothing else.
struct EmptyMessage {
  static constexpr const char* kWireName = "empty message";
  template <typename Self, typename Visit>
  static void Fields(Self&, Visit&& visit) {
    visit();
  }
};

// The name a message gives itself (kWireName) for errors, or a generic one.
template <typename M>
constexpr const char* WireNameOf() {
  if constexpr (requires { M::kWireName; }) {
    return M::kWireName;
  } else {
    return "wire message";
  }
}

template <typename M>
std::vector<std::byte> WireEncode(const M& message) {
  WireWriter w;
  wire_fields::Put(w, message);
  return w.Take();
}

// Decodes a whole message named `name` (for the error). With `Status Validate() const` on M,
// a message whose fields contradict each other is refused too.
template <typename M>
Result<M> WireDecode(std::span<const std::byte> bytes, const char* name);

// WireDecode into an existing message: every field is overwritten, and vectors and strings keep
// the capacity they had, so a message decoded again and again into the same object (a hot
// RPC's reply) allocates nothing once it has seen its largest size. After a failure `*message`
// holds a partial decode and must not be used.
template <typename M>
Status WireDecodeInto(std::span<const std::byte> bytes, const char* name, M* message) {
  WireReader r(bytes);
  wire_fields::Get(r, message);
  if (!r.done()) {
    return ProtocolError(std::string("malformed ") + name +
                         (r.ok() ? ": trailing bytes" : ": truncated or out of range"));
  }
  if constexpr (requires(const M& m) { m.Validate(); }) {
    return message->Validate();
  }
  return Status::Ok();
}

template <typename M>
Result<M> WireDecode(std::span<const std::byte> bytes, const char* name) {
  M message;
  Status s = WireDecodeInto(bytes, name, &message);
  if (!s.ok()) return s;
  return message;
}

template <typename M>
std::vector<std::byte> WireMessage<M>::Encode() const {
  return WireEncode(static_cast<const M&>(*this));
}

template <typename M>
Result<M> WireMessage<M>::Decode(std::span<const std::byte> bytes) {
  return WireDecode<M>(bytes, M::kWireName);
}

}  // namespace mooncake
