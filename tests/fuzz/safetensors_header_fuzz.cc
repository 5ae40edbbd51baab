// Fuzzes the safetensors header parser (model/safetensors.h), which reads checkpoint files a
// user points `mooncake generate --model` at. The input is a file's first bytes and the whole
// file. A header it accepts must place every tensor inside the file, with as many bytes as its
// dtype and shape need.
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "model/safetensors.h"

using namespace mooncake;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view image(reinterpret_cast<const char*>(data), size);
  auto file = model::SafetensorsFile::Parse(image, size, "fuzz.safetensors");
  if (!file.ok()) return 0;
  for (const auto& [name, t] : file->tensors()) {
    MC_FUZZ_CHECK(t.begin >= 8 && t.begin <= size && t.bytes <= size - t.begin, "in the file");
    uint64_t elements = 1;
    for (int64_t d : t.shape) {
      MC_FUZZ_CHECK(d >= 0, "shape");
      elements *= static_cast<uint64_t>(d);
    }
    if (t.dtype == "F32") MC_FUZZ_CHECK(elements * 4 == t.bytes, "F32 bytes");
    if (t.dtype == "F16" || t.dtype == "BF16")
      MC_FUZZ_CHECK(elements * 2 == t.bytes, "16-bit bytes");
  }
  return 0;
}
