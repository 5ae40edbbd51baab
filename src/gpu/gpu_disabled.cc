// The serial twin of gpu_cuda.cc, built when CUDA or NCCL is not found.
#include "gpu/gpu.h"

namespace mooncake::gpu {

GpuInfo Probe() {
  GpuInfo info;
  info.why_none = "this build has no CUDA/NCCL (configure with -DMOONCAKE_WITH_CUDA=ON)";
  return info;
}

Status FillBlockOnDevice(int, void*, size_t, const BlockContentKey&) {
  return NotSupported("this build has no CUDA");
}

Status VerifyDeviceFill(int, size_t, const BlockContentKey&) {
  return NotSupported("this build has no CUDA");
}

}  // namespace mooncake::gpu
