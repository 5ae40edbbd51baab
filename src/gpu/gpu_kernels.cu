// Device-side generator of KV block content: thread i writes 64-bit word i as the host's
// FillBlockContent does (SplitMix64 of seed + i), so a block filled on a GPU verifies on any rank.
#include <cstdint>

#include "gpu/gpu_kernels.h"

namespace mooncake::gpu {
namespace {

__device__ __host__ inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

__global__ void FillWords(uint64_t* out, size_t words, uint64_t seed) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (; i < words; i += stride) out[i] = SplitMix64(seed + i);
}

__global__ void FillTail(unsigned char* out, size_t words, size_t tail, uint64_t seed) {
  uint64_t v = SplitMix64(seed + words);
  for (size_t b = 0; b < tail; ++b) out[words * 8 + b] = static_cast<unsigned char>(v >> (8 * b));
}

}  // namespace

cudaError_t LaunchFill(void* device_ptr, size_t bytes, uint64_t seed, cudaStream_t stream) {
  const size_t words = bytes / 8;
  if (words > 0) {
    const int threads = 256;
    const int blocks = static_cast<int>(words / threads + 1 < 4096 ? words / threads + 1 : 4096);
    FillWords<<<blocks, threads, 0, stream>>>(static_cast<uint64_t*>(device_ptr), words, seed);
  }
  if (bytes % 8 != 0) {
    FillTail<<<1, 1, 0, stream>>>(static_cast<unsigned char*>(device_ptr), words, bytes % 8, seed);
  }
  return cudaGetLastError();
}

}  // namespace mooncake::gpu
