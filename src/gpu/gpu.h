// GPUs, below engine and transport: what this build and this node can do with GPUs, and the
// device-side fill of KV blocks (the same bytes as common/block_content.h, generated where the
// KV lives). Built from gpu_cuda.cc + gpu_kernels.cu when CUDA and NCCL are found
// (MOONCAKE_WITH_CUDA=AUTO|ON), from gpu_disabled.cc otherwise; both return errors as values.
// The only folder that includes <nccl.h> or CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/block_content.h"
#include "common/status.h"

namespace mooncake::gpu {

struct GpuInfo {
  bool cuda_built = false;  // this binary was built with CUDA and NCCL
  int devices = 0;          // usable GPUs on this node
  int nccl_version = 0;     // e.g. 22809 for 2.28.9; 0 when not built
  std::string why_none;     // why there is no usable GPU ("no CUDA driver", ...), if devices == 0
};

// Never fails: a machine without a driver or a GPU reports devices == 0 and says why.
GpuInfo Probe();
// "CUDA/NCCL built (NCCL 2.28.9), 0 GPUs: no CUDA driver" or "CUDA/NCCL not built".
std::string Describe(const GpuInfo& info);

// Fills `bytes` of device memory at `device_ptr` with FillBlockContent(key) bytes, on GPU
// `device`. NotSupported without CUDA; an error naming the CUDA failure otherwise.
Status FillBlockOnDevice(int device, void* device_ptr, size_t bytes, const BlockContentKey& key);

// Round trip used by tests: allocates `bytes` on GPU `device`, fills them on the device, copies
// them back and checks them against the host generator.
Status VerifyDeviceFill(int device, size_t bytes, const BlockContentKey& key);

}  // namespace mooncake::gpu
