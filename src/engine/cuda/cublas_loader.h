// cuBLAS, opened when the CUDA engine first starts instead of linked into every process.
//
// libcublas.so pulls in libcublasLt, whose load alone costs a process about 210 MiB of resident
// memory (measured: a process that only dlopens it peaks at 220 MiB, against 9 MiB). Linked,
// every rank of every job paid that, GPU or not, and the conductor's RSS bound check
// (mpi_serve_overload_within_budgets) failed. Only a rank that runs the model on a GPU opens it
// now; the rest of the CUDA engine uses the five calls below through this table.
#pragma once

#include <cublas_v2.h>

#include "common/status.h"

namespace mooncake::engine {

struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// The table, opened on the first call (thread-safe); NotSupported naming the library and
// dlerror's words when it cannot be opened or lacks a call.
Result<const CublasApi*> Cublas();

}  // namespace mooncake::engine
