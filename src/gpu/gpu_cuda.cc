#include <cuda_runtime_api.h>
#include <nccl.h>

#include <vector>

#include "gpu/gpu.h"
#include "gpu/gpu_kernels.h"

namespace mooncake::gpu {
namespace {

Status CudaError(const char* what, cudaError_t e) {
  return Internal(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

GpuInfo Probe() {
  GpuInfo info;
  info.cuda_built = true;
  int version = 0;
  if (ncclGetVersion(&version) == ncclSuccess) info.nccl_version = version;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
    info.why_none = e == cudaErrorNoDevice ? "no CUDA device" : "no CUDA driver";
  } else if (e != cudaSuccess) {
    info.why_none = cudaGetErrorString(e);
  } else {
    info.devices = count;
    if (count == 0) info.why_none = "no CUDA device";
  }
  return info;
}

Status FillBlockOnDevice(int device, void* device_ptr, size_t bytes, const BlockContentKey& key) {
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) return CudaError("cudaSetDevice", e);
  e = LaunchFill(device_ptr, bytes, BlockContentSeed(key), nullptr);
  if (e != cudaSuccess) return CudaError("fill kernel launch", e);
  e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return CudaError("fill kernel", e);
  return Status::Ok();
}

Status VerifyDeviceFill(int device, size_t bytes, const BlockContentKey& key) {
  cudaError_t e = cudaSetDevice(device);
  if (e != cudaSuccess) return CudaError("cudaSetDevice", e);
  void* d = nullptr;
  if ((e = cudaMalloc(&d, bytes)) != cudaSuccess) return CudaError("cudaMalloc", e);
  Status s = FillBlockOnDevice(device, d, bytes, key);
  std::vector<std::byte> host(bytes);
  if (s.ok() && (e = cudaMemcpy(host.data(), d, bytes, cudaMemcpyDeviceToHost)) != cudaSuccess) {
    s = CudaError("cudaMemcpy", e);
  }
  cudaFree(d);
  if (s.ok() && !VerifyBlockContent(key, host)) {
    s = Corrupt("the device-filled block differs from the host generator");
  }
  return s;
}

}  // namespace mooncake::gpu
