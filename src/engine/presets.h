// Model and hardware presets, read from INI files (configs/models/*.ini, configs/hardware/*.ini).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "engine/ini.h"

namespace mooncake::engine {

// Mooncake Table 1 notation. flops(n) = layers * (a n^2 d + b n d^2).
struct ModelSpec {
  std::string name;
  int layers = 0;             // l
  int hidden = 0;             // d
  double a = 4;               // attention coefficient
  double b = 22;              // linear-layer coefficient
  int gqa = 1;                // g: query heads per KV head
  int bytes_per_element = 2;  // s
  double params = 0;          // weight count (every forward pass reads all weights)
  // Longest sequence (prompt + output) the model serves, in tokens; 0 when the preset does not
  // say (optional key `max_context`). vLLM's default step budget derives from it.
  int64_t max_context = 0;
};

// One instance (a node of `gpus` GPUs working as one tensor-parallel engine).
struct HardwareSpec {
  std::string name;
  int gpus = 8;
  double peak_flops = 0;       // whole instance, FLOP/s
  double mfu = 0.5;            // model FLOPs utilization reached in prefill and decode
  double hbm_bytes_per_s = 0;  // whole instance
  double mbu = 0.8;            // share of HBM bandwidth reached by decode
  uint64_t hbm_bytes = 0;      // whole instance capacity
  uint64_t dram_bytes = 0;     // host DRAM usable as KV cache
  double nic_bytes_per_s = 0;  // all NICs of the instance
};

Result<ModelSpec> ModelFromIni(const IniValues& v, std::string_view source);
Result<HardwareSpec> HardwareFromIni(const IniValues& v, std::string_view source);

// `name_or_path`: a preset name looked up as <dir>/<name>.ini, or a path to an .ini file.
Result<ModelSpec> LoadModelPreset(const std::string& models_dir, const std::string& name_or_path);
Result<HardwareSpec> LoadHardwarePreset(const std::string& hardware_dir,
                                        const std::string& name_or_path);

}  // namespace mooncake::engine
