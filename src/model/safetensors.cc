#include "model/safetensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

namespace mooncake::model {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

namespace {

// The header of a real checkpoint is a few hundred KiB; more than this is not a header.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

uint64_t DtypeBytes(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" ||
      dtype == "F8_E5M2") {
    return 1;
  }
  return 0;
}

uint64_t HeaderLength(std::string_view head) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(head[i]);
  return n;
}

Status Bad(const std::string& path, const std::string& what) {
  return Corrupt(fmt::format("{}: not a valid safetensors file: {}", path, what));
}

}  // namespace

float HalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf or nan
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal half: normalise
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

float Bf16ToFloat(uint16_t b) { return std::bit_cast<float>(uint32_t{b} << 16); }

Result<SafetensorsFile> SafetensorsFile::Open(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return NotFound(fmt::format("{}: cannot open", path));
  const uint64_t file_bytes = static_cast<uint64_t>(in.tellg());
  std::string head(std::min<uint64_t>(file_bytes, 8), '\0');
  in.seekg(0);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  if (head.size() == 8) {
    const uint64_t header_bytes = HeaderLength(head);
    if (header_bytes <= kMaxHeaderBytes && header_bytes <= file_bytes - 8) {
      head.resize(8 + header_bytes);
      if (!in.read(head.data() + 8, static_cast<std::streamsize>(header_bytes))) {
        return IoError(fmt::format("{}: cannot read the {}-byte header", path, header_bytes));
      }
    }
  }
  return Parse(head, file_bytes, path);
}

Result<SafetensorsFile> SafetensorsFile::Parse(std::string_view head, uint64_t file_bytes,
                                               const std::string& path) {
  if (file_bytes < 8 || head.size() < 8) {
    return Bad(path, fmt::format("{} bytes, shorter than the 8-byte length", file_bytes));
  }
  const uint64_t header_bytes = HeaderLength(head);
  if (header_bytes > kMaxHeaderBytes || header_bytes > file_bytes - 8 ||
      header_bytes > head.size() - 8) {
    return Bad(path, fmt::format("header length {} exceeds the file ({} bytes)", header_bytes,
                                 file_bytes));
  }
  const std::string_view header = head.substr(8, header_bytes);
  const nlohmann::json j = nlohmann::json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Bad(path, "the header is not a JSON object");
  const uint64_t data_start = 8 + header_bytes, data_bytes = file_bytes - data_start;
  SafetensorsFile f;
  f.path_ = path;
  for (const auto& [name, t] : j.items()) {
    if (name == "__metadata__") continue;
    const auto dtype = t.find("dtype");
    const auto shape = t.find("shape");
    const auto offsets = t.find("data_offsets");
    if (!t.is_object() || dtype == t.end() || !dtype->is_string() || shape == t.end() ||
        !shape->is_array() || offsets == t.end() || !offsets->is_array() || offsets->size() != 2 ||
        !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
      return Bad(
          path, fmt::format("tensor '{}': needs dtype, shape and data_offsets [begin, end]", name));
    }
    TensorInfo info;
    info.dtype = dtype->get<std::string>();
    const uint64_t begin = (*offsets)[0].get<uint64_t>(), end = (*offsets)[1].get<uint64_t>();
    if (begin > end || end > data_bytes) {
      return Bad(path, fmt::format("tensor '{}': data_offsets [{}, {}] outside the {} data bytes",
                                   name, begin, end, data_bytes));
    }
    uint64_t elements = 1;
    for (const auto& d : *shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (1ull << 40)) {
        return Bad(
            path, fmt::format("tensor '{}': shape {} is not a list of sizes", name, shape->dump()));
      }
      info.shape.push_back(d.get<int64_t>());
      if (d.get<uint64_t>() != 0 && elements > (1ull << 50) / d.get<uint64_t>()) {
        return Bad(path, fmt::format("tensor '{}': shape {} too large", name, shape->dump()));
      }
      elements *= d.get<uint64_t>();
    }
    const uint64_t width = DtypeBytes(info.dtype);
    if (width != 0 && elements * width != end - begin) {
      return Bad(path, fmt::format("tensor '{}': {} x {} needs {} bytes, data_offsets give {}",
                                   name, info.dtype, shape->dump(), elements * width, end - begin));
    }
    info.begin = data_start + begin;
    info.bytes = end - begin;
    f.tensors_.emplace(name, std::move(info));
  }
  return f;
}

Result<std::vector<float>> SafetensorsFile::ReadFloats(
    const std::string& name, std::span<const int64_t> expected_shape) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) return NotFound(fmt::format("{}: no tensor '{}'", path_, name));
  const TensorInfo& t = it->second;
  if (!std::equal(t.shape.begin(), t.shape.end(), expected_shape.begin(), expected_shape.end())) {
    return InvalidArgument(fmt::format("{}: tensor '{}' has shape [{}], the config needs [{}]",
                                       path_, name, fmt::join(t.shape, ", "),
                                       fmt::join(expected_shape, ", ")));
  }
  const uint64_t width = DtypeBytes(t.dtype);
  if (t.dtype != "F32" && t.dtype != "F16" && t.dtype != "BF16") {
    return NotSupported(fmt::format("{}: tensor '{}' has dtype {} (F32, F16 and BF16 are read)",
                                    path_, name, t.dtype));
  }
  std::vector<char> raw(t.bytes);
  std::ifstream in(path_, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(t.begin));
  if (!in || !in.read(raw.data(), static_cast<std::streamsize>(t.bytes))) {
    return IoError(
        fmt::format("{}: cannot read tensor '{}' ({} bytes at {})", path_, name, t.bytes, t.begin));
  }
  std::vector<float> out(t.bytes / width);
  if (t.dtype == "F32") {
    std::memcpy(out.data(), raw.data(), t.bytes);
    return out;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t h;
    std::memcpy(&h, raw.data() + 2 * i, 2);
    out[i] = t.dtype == "F16" ? HalfToFloat(h) : Bf16ToFloat(h);
  }
  return out;
}

}  // namespace mooncake::model
