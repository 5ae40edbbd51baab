#include "engine/cuda/cublas_loader.h"

#include <dlfcn.h>

#include <string>

#include <fmt/format.h>

namespace mooncake::engine {
namespace {

// The toolkit's library found at configure time first, then the loader's search by soname.
#ifndef MOONCAKE_CUBLAS_LIBRARY
#define MOONCAKE_CUBLAS_LIBRARY ""
#endif

Result<CublasApi> Open() {
  const std::string soname = fmt::format("libcublas.so.{}", CUBLAS_VER_MAJOR);
  void* lib = nullptr;
  std::string tried;
  for (const std::string& name : {std::string(MOONCAKE_CUBLAS_LIBRARY), soname}) {
    if (name.empty()) continue;
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) break;
    const char* why = dlerror();
    tried += fmt::format("{}{}: {}", tried.empty() ? "" : "; ", name, why ? why : "not found");
  }
  if (lib == nullptr) return NotSupported("cannot open cuBLAS (" + tried + ")");
  CublasApi api;
  auto find = [&](auto* slot, const char* symbol) {
    *slot = reinterpret_cast<std::remove_pointer_t<decltype(slot)>>(dlsym(lib, symbol));
    return *slot != nullptr;
  };
  if (!find(&api.create, "cublasCreate_v2") || !find(&api.destroy, "cublasDestroy_v2") ||
      !find(&api.set_math_mode, "cublasSetMathMode") || !find(&api.sgemm, "cublasSgemm_v2") ||
      !find(&api.status_string, "cublasGetStatusString")) {
    return NotSupported(fmt::format("{} lacks a call the CUDA engine needs", soname));
  }
  return api;  // the library stays open for the process's life
}

}  // namespace

Result<const CublasApi*> Cublas() {
  static const Result<CublasApi> api = Open();
  if (!api.ok()) return api.status();
  return &*api;
}

}  // namespace mooncake::engine
