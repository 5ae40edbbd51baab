#include "engine/presets.h"

#include <fmt/format.h>

#include <cmath>

#include "common/units.h"

namespace mooncake::engine {
namespace {

std::string ResolvePath(const std::string& dir, const std::string& name_or_path) {
  if (name_or_path.find('/') != std::string::npos ||
      (name_or_path.size() > 4 && name_or_path.ends_with(".ini"))) {
    return name_or_path;
  }
  return dir + "/" + name_or_path + ".ini";
}

Result<double> Positive(const IniValues& v, const std::string& key, std::string_view source) {
  Result<double> d = IniNumber(v, key, source);
  if (!d.ok()) return d;
  if (!(*d > 0)) return InvalidArgument(fmt::format("{}: {}: must be > 0", source, key));
  return d;
}

Result<uint64_t> Bytes(const IniValues& v, const std::string& key, std::string_view source) {
  auto it = v.find(key);
  if (it == v.end()) return InvalidArgument(fmt::format("{}: {}: missing", source, key));
  Result<uint64_t> b = ParseBytes(it->second);
  if (!b.ok()) return b.status().WithContext(fmt::format("{}: {}", source, key));
  return b;
}

#define MC_ASSIGN_OR_RETURN_NUM(lhs, expr)  \
  do {                                      \
    auto mc_r_ = (expr);                    \
    if (!mc_r_.ok()) return mc_r_.status(); \
    lhs = *mc_r_;                           \
  } while (0)

}  // namespace

Result<ModelSpec> ModelFromIni(const IniValues& v, std::string_view src) {
  ModelSpec m;
  auto name = v.find("model.name");
  m.name = name == v.end() ? std::string(src) : name->second;
  MC_ASSIGN_OR_RETURN_NUM(m.layers, Positive(v, "model.layers", src));
  MC_ASSIGN_OR_RETURN_NUM(m.hidden, Positive(v, "model.hidden", src));
  MC_ASSIGN_OR_RETURN_NUM(m.a, Positive(v, "model.a", src));
  MC_ASSIGN_OR_RETURN_NUM(m.b, Positive(v, "model.b", src));
  MC_ASSIGN_OR_RETURN_NUM(m.gqa, Positive(v, "model.gqa", src));
  MC_ASSIGN_OR_RETURN_NUM(m.bytes_per_element, Positive(v, "model.bytes_per_element", src));
  MC_ASSIGN_OR_RETURN_NUM(m.params, Positive(v, "model.params", src));
  if (v.count("model.max_context")) {
    double tokens = 0;
    MC_ASSIGN_OR_RETURN_NUM(tokens, Positive(v, "model.max_context", src));
    if (tokens != std::floor(tokens) || tokens > 1e9) {
      return InvalidArgument(
          fmt::format("{}: model.max_context: a whole number of tokens up to 1e9", src));
    }
    m.max_context = static_cast<int64_t>(tokens);
  }
  if (m.hidden % m.gqa != 0) {
    return InvalidArgument(fmt::format("{}: model.gqa: must divide model.hidden", src));
  }
  return m;
}

Result<HardwareSpec> HardwareFromIni(const IniValues& v, std::string_view src) {
  HardwareSpec h;
  auto name = v.find("hardware.name");
  h.name = name == v.end() ? std::string(src) : name->second;
  double tflops = 0, hbm_gbs = 0, nic_gbit = 0;
  MC_ASSIGN_OR_RETURN_NUM(h.gpus, Positive(v, "hardware.gpus", src));
  MC_ASSIGN_OR_RETURN_NUM(tflops, Positive(v, "hardware.peak_tflops_per_gpu", src));
  MC_ASSIGN_OR_RETURN_NUM(h.mfu, Positive(v, "hardware.mfu", src));
  MC_ASSIGN_OR_RETURN_NUM(hbm_gbs, Positive(v, "hardware.hbm_gb_per_s_per_gpu", src));
  MC_ASSIGN_OR_RETURN_NUM(h.mbu, Positive(v, "hardware.mbu", src));
  uint64_t hbm_per_gpu = 0;
  MC_ASSIGN_OR_RETURN_NUM(hbm_per_gpu, Bytes(v, "hardware.hbm_per_gpu", src));
  MC_ASSIGN_OR_RETURN_NUM(h.dram_bytes, Bytes(v, "hardware.dram", src));
  MC_ASSIGN_OR_RETURN_NUM(nic_gbit, Positive(v, "hardware.nic_gbit_per_s", src));
  if (h.mfu > 1 || h.mbu > 1) {
    return InvalidArgument(fmt::format("{}: hardware.mfu and hardware.mbu must be in (0, 1]", src));
  }
  h.peak_flops = tflops * 1e12 * h.gpus;
  h.hbm_bytes_per_s = hbm_gbs * 1e9 * h.gpus;
  h.hbm_bytes = hbm_per_gpu * static_cast<uint64_t>(h.gpus);
  h.nic_bytes_per_s = nic_gbit * 1e9 / 8;
  return h;
}

Result<ModelSpec> LoadModelPreset(const std::string& dir, const std::string& name_or_path) {
  const std::string path = ResolvePath(dir, name_or_path);
  Result<IniValues> v = ReadIniFile(path);
  if (!v.ok()) return v.status().WithContext("model preset '" + name_or_path + "'");
  return ModelFromIni(*v, path);
}

Result<HardwareSpec> LoadHardwarePreset(const std::string& dir, const std::string& name_or_path) {
  const std::string path = ResolvePath(dir, name_or_path);
  Result<IniValues> v = ReadIniFile(path);
  if (!v.ok()) return v.status().WithContext("hardware preset '" + name_or_path + "'");
  return HardwareFromIni(*v, path);
}

}  // namespace mooncake::engine
