// The engine's CUDA part may include CUDA headers (right on purpose: no problem reported).
#include <cuda_runtime_api.h>
