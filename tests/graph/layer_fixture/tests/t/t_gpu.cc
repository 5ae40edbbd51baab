// A test that calls CUDA itself instead of through gpu/gpu.h (wrong on purpose).
#include <cuda_runtime_api.h>
