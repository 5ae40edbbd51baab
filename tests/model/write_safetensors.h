// Test helper: writes a safetensors file from (name, dtype, shape, raw bytes) entries.
#pragma once

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mooncake::model::testing {

struct RawTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<char> bytes;
};

inline RawTensor F32Tensor(std::string name, std::vector<int64_t> shape,
                           const std::vector<float>& values) {
  RawTensor t{std::move(name), "F32", std::move(shape), {}};
  t.bytes.resize(values.size() * 4);
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

// `header_override` replaces the JSON header when not empty (for malformed files).
inline void WriteSafetensors(const std::string& path, const std::vector<RawTensor>& tensors,
                             const std::string& header_override = "") {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const RawTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  const std::string text = header_override.empty() ? header.dump() : header_override;
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << text;
  for (const RawTensor& t : tensors)
    out.write(t.bytes.data(), static_cast<std::streamsize>(t.bytes.size()));
}

}  // namespace mooncake::model::testing
