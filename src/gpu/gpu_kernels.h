// Internal to src/gpu: the kernel launcher of gpu_kernels.cu.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace mooncake::gpu {

// Seed as common/block_content.cc derives it from a BlockContentKey.
cudaError_t LaunchFill(void* device_ptr, size_t bytes, uint64_t seed, cudaStream_t stream);

}  // namespace mooncake::gpu
