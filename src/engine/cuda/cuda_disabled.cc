// The CUDA transformer in a build without CUDA (MOONCAKE_WITH_CUDA=OFF, or no nvcc and NCCL
// under /usr/local/cuda at configure time): it says so.
#include "engine/cuda/cuda_kv_compute.h"
#include "gpu/gpu.h"

namespace mooncake::engine {

Result<std::unique_ptr<KvCompute>> CudaKvCompute(const model::LoadedModel& model, int device) {
  (void)model, (void)device;
  return NotSupported("no CUDA GPU to run the model on: " + gpu::Describe(gpu::Probe()) +
                      " (configure with CUDA and NCCL under /usr/local/cuda)");
}

}  // namespace mooncake::engine
