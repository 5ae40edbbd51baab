#include "common/streaming_copy.h"

#include <atomic>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mooncake {
namespace {

std::atomic<bool> force_sse2{false};

// Below this the fence and the alignment head cost more than the read-for-ownership saves.
constexpr size_t kMinStreamBytes = 16 * 1024;

#if defined(__x86_64__)
// The body of the copy: dst is 64-byte aligned, n a multiple of 256. AVX-512 when the CPU has
// it (one full cache line per store), SSE2 otherwise (part of x86-64).
__attribute__((target("avx512f"))) void StreamBody512(std::byte* dst, const std::byte* src,
                                                      size_t n) {
  for (size_t i = 0; i < n; i += 256) {
    const __m512i a = _mm512_loadu_si512(src + i);
    const __m512i b = _mm512_loadu_si512(src + i + 64);
    const __m512i c = _mm512_loadu_si512(src + i + 128);
    const __m512i d = _mm512_loadu_si512(src + i + 192);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), a);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 64), b);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 128), c);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 192), d);
  }
}

void StreamBody128(std::byte* dst, const std::byte* src, size_t n) {
  for (size_t i = 0; i < n; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), d);
  }
}

// A function-local static: a StreamingCopy from another static constructor still gets the
// right answer (a namespace-scope constant might not be initialised yet).
bool HasAvx512() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}
#endif

}  // namespace

void StreamingCopy(void* dst, const void* src, size_t n) {
#if defined(__x86_64__)
  if (n >= kMinStreamBytes) {
    auto* d = static_cast<std::byte*>(dst);
    const auto* s = static_cast<const std::byte*>(src);
    // Head up to the first 64-byte boundary of dst, and the tail, go through the cache.
    const size_t head = (64 - reinterpret_cast<uintptr_t>(d) % 64) % 64;
    const size_t body = (n - head) / 256 * 256;
    std::memcpy(d, s, head);
    if (HasAvx512() && !force_sse2.load(std::memory_order_relaxed)) {
      StreamBody512(d + head, s + head, body);
    } else {
      StreamBody128(d + head, s + head, body);
    }
    std::memcpy(d + head + body, s + head + body, n - head - body);
    _mm_sfence();  // streaming stores are weakly ordered: make them visible before returning
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

void ForceStreamingCopySse2ForTest(bool force) { force_sse2 = force; }

}  // namespace mooncake
