#include "common/streaming_copy.h"

#include <atomic>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace mooncake {
namespace {

std::atomic<bool> force_sse2{false};

// Below this the fence and the alignment head cost more than the read-for-ownership saves.
constexpr size_t kMinStreamBytes = 16 * 1024;
// LargeCopy: glibc's memcpy below 1 MiB; from 1 MiB `rep movsb` where the CPU has fast strings
// (ERMS); from 10 MiB streaming stores, ERMS or not (from 4 MiB without ERMS: four times a core's
// L2, the destination would leave that cache before it is read anyway). glibc's memcpy switches
// from `rep movsb` to its vector loop somewhere below 1 MiB and turns non-temporal only near the
// size of the L3 it reads from sysconf, which on this VM is the host's 320 MiB, not the 32 MiB
// one core shares (lscpu). Measured on the EPYC CI machine, transfer_bench over shared memory
// (one buffer cycled, as ucx_perftest; GB/s, rep movsb against streamed, two rounds each):
// 4 MiB 46-47 against 26-27; 8 MiB 28-30 against 26-27; 10 MiB 25-27 against 27; 11 MiB 22-25
// against 27; 12 MiB 20-24 against 26-27; 16 MiB 16-21 against 26; 32 MiB 12-14 against 18-19.
// Once a copy's source and destination together outgrow about two thirds of the L3, every
// destination line it writes back costs a read for ownership first; streamed, it does not.
// Earlier (commit 8d00c7f), on that day's machine: 1 MiB 67-69 against memcpy's 57-59; a
// bare copy of 512 KiB 107 against memcpy's 110 (hence not below 1 MiB).
constexpr size_t kMinRepMovsbBytes = size_t{1} << 20;
constexpr size_t kMinLargeStreamBytes = size_t{10} << 20;
constexpr size_t kMinLargeStreamBytesWithoutErms = size_t{4} << 20;

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

bool HasErms() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) != 0 && (b & (1u << 9)) != 0;
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

void LargeCopy(void* dst, const void* src, size_t n) {
#if defined(__x86_64__)
  static const bool erms = HasErms();
  if (n >= (erms ? kMinLargeStreamBytes : kMinLargeStreamBytesWithoutErms)) {
    StreamingCopy(dst, src, n);
    return;
  }
  if (n >= kMinRepMovsbBytes && erms) {
    asm volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

}  // namespace mooncake
