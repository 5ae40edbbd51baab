#include "engine/presets.h"

#include <gtest/gtest.h>

namespace mooncake::engine {
namespace {

const std::string kModels = std::string(MOONCAKE_CONFIGS_DIR) + "/models";
const std::string kHardware = std::string(MOONCAKE_CONFIGS_DIR) + "/hardware";

TEST(Presets, ShippedModelPresetsLoad) {
  for (const char* name : {"llama3-70b", "llama3-8b"}) {
    auto m = LoadModelPreset(kModels, name);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(m->name, name);
  }
  auto m = LoadModelPreset(kModels, "llama3-70b");
  EXPECT_EQ(m->layers, 80);
  EXPECT_EQ(m->hidden, 8192);
  EXPECT_EQ(m->gqa, 8);
  EXPECT_EQ(m->max_context, 131072);  // LLaMA 3.1's 128k context (vLLM's default budget)
}

TEST(Presets, MaxContextIsOptionalAndAWholeNumber) {
  const std::string base =
      "[model]\nlayers = 80\nhidden = 8192\na = 4\nb = 22\ngqa = 8\nbytes_per_element = 2\nparams "
      "= 70.6e9\n";
  auto without = ModelFromIni(*ParseIni(base, "x.ini"), "x.ini");
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  EXPECT_EQ(without->max_context, 0);
  auto bad = ModelFromIni(*ParseIni(base + "max_context = 1.5\n", "x.ini"), "x.ini");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x.ini: model.max_context"), std::string::npos)
      << bad.status().message();
}

TEST(Presets, ShippedHardwarePresetsLoad) {
  for (const char* name : {"a800x8", "h100x8", "h200x8"}) {
    auto h = LoadHardwarePreset(kHardware, name);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    EXPECT_EQ(h->name, name);
  }
  auto h = LoadHardwarePreset(kHardware, "a800x8");
  EXPECT_DOUBLE_EQ(h->peak_flops, 8 * 312e12);
  EXPECT_DOUBLE_EQ(h->nic_bytes_per_s, 100e9);  // 4 x 200 Gbps
  EXPECT_EQ(h->hbm_bytes, 8ULL * 80 * 1024 * 1024 * 1024);
}

TEST(Presets, UnknownPresetIsNotFound) {
  auto m = LoadModelPreset(kModels, "no-such-model");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kNotFound);
}

TEST(Presets, BadValueNamesFileAndKey) {
  auto v = ParseIni("[model]\nlayers = 80\nhidden = abc\n", "x.ini");
  ASSERT_TRUE(v.ok());
  auto m = ModelFromIni(*v, "x.ini");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("x.ini: model.hidden"), std::string::npos)
      << m.status().message();
}

TEST(Ini, MalformedLineNamesLine) {
  auto v = ParseIni("[a]\nk = 1\noops\n", "f.ini");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("f.ini:3:"), std::string::npos);
}

}  // namespace
}  // namespace mooncake::engine
