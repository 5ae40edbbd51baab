#include "gpu/gpu.h"

namespace mooncake::gpu {

std::string Describe(const GpuInfo& info) {
  if (!info.cuda_built) return "CUDA/NCCL not built";
  std::string s = "CUDA/NCCL built";
  if (info.nccl_version > 0) {
    int v = info.nccl_version;
    s += " (NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100) + ")";
  }
  s += ", " + std::to_string(info.devices) + " GPU" + (info.devices == 1 ? "" : "s");
  if (info.devices == 0 && !info.why_none.empty()) s += ": " + info.why_none;
  return s;
}

}  // namespace mooncake::gpu
