#include "model/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "write_safetensors.h"

namespace mooncake::model {
namespace {

using testing::F32Tensor;
using testing::RawTensor;
using testing::WriteSafetensors;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          (name + "-" + std::to_string(::getpid()) + ".safetensors"))
      .string();
}

TEST(SafetensorsTest, ReadsF32F16AndBf16AsFloat) {
  const std::string path = TempPath("dtypes");
  RawTensor f16{"h", "F16", {3}, {}};
  for (uint16_t v : {uint16_t{0x3c00}, uint16_t{0xc000}, uint16_t{0x0001}}) {  // 1, -2, 2^-24
    f16.bytes.push_back(static_cast<char>(v & 0xff));
    f16.bytes.push_back(static_cast<char>(v >> 8));
  }
  RawTensor bf16{"b", "BF16", {2}, {}};
  for (uint16_t v : {uint16_t{0x3f80}, uint16_t{0x4049}}) {  // 1, 3.140625
    bf16.bytes.push_back(static_cast<char>(v & 0xff));
    bf16.bytes.push_back(static_cast<char>(v >> 8));
  }
  WriteSafetensors(path, {F32Tensor("f", {2, 2}, {1.5f, -2.f, 3.f, 0.25f}), f16, bf16});
  auto file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const std::vector<int64_t> s22{2, 2}, s3{3}, s2{2};
  auto f = file->ReadFloats("f", s22);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(*f, (std::vector<float>{1.5f, -2.f, 3.f, 0.25f}));
  auto h = file->ReadFloats("h", s3);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(*h, (std::vector<float>{1.0f, -2.0f, std::ldexp(1.0f, -24)}));
  auto b = file->ReadFloats("b", s2);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, (std::vector<float>{1.0f, 3.140625f}));
  std::filesystem::remove(path);
}

TEST(SafetensorsTest, WrongShapeAndMissingTensorNameTheTensor) {
  const std::string path = TempPath("shape");
  WriteSafetensors(path, {F32Tensor("w", {2, 2}, {1, 2, 3, 4})});
  auto file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok());
  const std::vector<int64_t> s4{4};
  auto r = file->ReadFloats("w", s4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'w' has shape [2, 2]"), std::string::npos)
      << r.status().message();
  auto missing = file->ReadFloats("x", s4);
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  std::filesystem::remove(path);
}

TEST(SafetensorsTest, UnsupportedDtypeIsRefusedOnRead) {
  const std::string path = TempPath("i8");
  WriteSafetensors(path, {RawTensor{"q", "I8", {2}, {1, 2}}});
  auto file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok());
  const std::vector<int64_t> s2{2};
  EXPECT_EQ(file->ReadFloats("q", s2).status().code(), ErrorCode::kNotSupported);
  std::filesystem::remove(path);
}

// Each malformed file is refused at Open, naming the file, never read past its end.
TEST(SafetensorsTest, MalformedFilesAreRefused) {
  const std::string path = TempPath("bad");
  const std::vector<std::pair<std::string, std::vector<RawTensor>>> cases = {
      {"not json", {}},
      {"[1, 2]", {}},
      {R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 9]}})",
       {F32Tensor("w", {2}, {1, 2})}},  // past the data
      {R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})",
       {F32Tensor("w", {2}, {1, 2})}},  // shape and bytes disagree
      {R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}})",
       {F32Tensor("w", {2}, {1, 2})}},  // begin after end
      {R"({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})",
       {F32Tensor("w", {2}, {1, 2})}},
      {R"({"w": {"dtype": "F32", "shape": [2]}})", {F32Tensor("w", {2}, {1, 2})}},
  };
  for (const auto& [header, tensors] : cases) {
    WriteSafetensors(path, tensors, header);
    auto file = SafetensorsFile::Open(path);
    ASSERT_FALSE(file.ok()) << header;
    EXPECT_NE(file.status().message().find(path), std::string::npos) << file.status().message();
  }
  // A header length beyond the file, and a file shorter than the length field.
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    const char len[8] = {static_cast<char>(0xff), 0x7f, 0, 0, 0, 0, 0, 0};
    out.write(len, 8);
    out << "{}";
  }
  EXPECT_EQ(SafetensorsFile::Open(path).status().code(), ErrorCode::kCorrupt);
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "abc";
  }
  EXPECT_EQ(SafetensorsFile::Open(path).status().code(), ErrorCode::kCorrupt);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace mooncake::model
