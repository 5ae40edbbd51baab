#include "gpu/gpu.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace mooncake::gpu {
namespace {

TEST(GpuTest, ProbeNeverFailsAndExplainsAMissingGpu) {
  GpuInfo info = Probe();
  // Without a device node there is no device to find, whatever the build; with none found, the
  // probe says why (no driver, no device, a build without CUDA).
  if (!std::filesystem::exists("/dev/nvidia0")) {
    EXPECT_EQ(info.devices, 0);
  }
  if (info.devices == 0) {
    EXPECT_FALSE(info.why_none.empty());
  }
  EXPECT_GE(info.devices, 0);
  EXPECT_FALSE(Describe(info).empty());
}

TEST(GpuTest, DeviceFilledBlockMatchesTheHostGenerator) {
  GpuInfo info = Probe();
  if (info.devices == 0) GTEST_SKIP() << "needs a GPU: " << Describe(info);
  BlockContentKey key{7, 3, ModelTag("llama3-70b")};
  Status s = VerifyDeviceFill(0, (1 << 20) + 5, key);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

}  // namespace
}  // namespace mooncake::gpu
