// Our reader of the safetensors format (Hugging Face): 8 bytes little-endian header length N,
// N bytes of JSON {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": ...},
// then the raw little-endian tensors, offsets relative to the end of the header. Every length
// and offset is checked against the file before use; a malformed file is an error naming it.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace mooncake::model {

struct TensorInfo {
  std::string dtype;           // as written: F32, F16, BF16 (readable), others listed only
  std::vector<int64_t> shape;  // row-major
  uint64_t begin = 0;          // absolute file offset of the first byte
  uint64_t bytes = 0;
};

class SafetensorsFile {
 public:
  // Reads and checks the header; tensor data is read on demand.
  static Result<SafetensorsFile> Open(const std::string& path);
  // The checks of Open on a file's first bytes (`head`: the length field and as much of the
  // header as the file holds) and its size; `path` names it in errors. Reads nothing.
  static Result<SafetensorsFile> Parse(std::string_view head, uint64_t file_bytes,
                                       const std::string& path);

  const std::string& path() const { return path_; }
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }

  // The tensor as float32 (F32 as is, F16 and BF16 widened exactly). kNotFound when absent,
  // kInvalidArgument when its shape differs from `expected_shape`, kNotSupported for another
  // dtype; each names the file and the tensor.
  Result<std::vector<float>> ReadFloats(const std::string& name,
                                        std::span<const int64_t> expected_shape) const;

 private:
  std::string path_;
  std::map<std::string, TensorInfo> tensors_;
};

// Exact conversions (no rounding: both fit in float32).
float HalfToFloat(uint16_t h);
float Bf16ToFloat(uint16_t b);

}  // namespace mooncake::model
