#include "trace/trace_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include "../support/scratch_dir.h"

namespace mooncake::trace {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = test_support::BinaryScratchDir() / name;
  std::ofstream(path) << text;
  return path;
}

const char* kGood1 =
    R"({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]})";
const char* kGood2 =
    R"({"timestamp": 10, "input_length": 512, "output_length": 1, "hash_ids": [1]})";

TEST(TraceReader, ReadsValidLines) {
  auto path = WriteTemp("ok.jsonl", std::string(kGood1) + "\n\n" + kGood2 + "\n");
  auto r = ReadTrace(path, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].input_length, 600);
  EXPECT_EQ((*r)[0].hash_ids[1].value, 2u);
  EXPECT_EQ((*r)[1].timestamp_ms, 10);
  EXPECT_EQ((*r)[1].line, 3);
  EXPECT_EQ((*r)[1].id.value, 1u);
}

struct BadCase {
  const char* line;
  const char* expect;  // substring after "FILE:2: "
};

class TraceReaderBadLine : public ::testing::TestWithParam<BadCase> {};

TEST_P(TraceReaderBadLine, FailsNamingFileLineAndField) {
  auto path = WriteTemp("bad.jsonl", std::string(kGood2) + "\n" + GetParam().line + "\n");
  auto r = ReadTrace(path, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find(path + ":2: " + GetParam().expect), std::string::npos)
      << r.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Cases, TraceReaderBadLine,
    ::testing::Values(
        BadCase{R"({"timestamp": 20, "input_length": )", "json: not valid JSON"},
        BadCase{R"({"timestamp": 20, "output_length": 1, "hash_ids": [1]})",
                "input_length: missing"},
        BadCase{R"({"timestamp": 20, "input_length": -5, "output_length": 1, "hash_ids": []})",
                "input_length: negative"},
        BadCase{
            R"({"timestamp": 20, "input_length": 1025, "output_length": 1, "hash_ids": [1, 2]})",
            "hash_ids: has 2 ids but input_length 1025 needs ceil(1025/512) = 3"},
        BadCase{R"({"timestamp": 5, "input_length": 1, "output_length": 1, "hash_ids": [7]})",
                "timestamp: decreases (5 after 10)"},
        BadCase{R"({"timestamp": 20, "input_length": 1, "output_length": "x", "hash_ids": [7]})",
                "output_length: not an integer"}));

TEST(TraceReader, SkipInvalidCountsAndSkips) {
  auto path = WriteTemp("skip.jsonl", std::string(kGood1) + "\nnot json\n" + kGood2 + "\n");
  TraceReadStats stats;
  TraceReadOptions opt;
  opt.skip_invalid = true;
  auto r = ReadTrace(path, opt, &stats);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->size(), 2u);
  EXPECT_EQ(stats.skipped, 1u);
}

TEST(TraceReader, OffsetAndLimitSelectASlice) {
  std::string text;
  for (int i = 0; i < 10; ++i) {
    text += "{\"timestamp\": " + std::to_string(i) +
            ", \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [" + std::to_string(i) +
            "]}\n";
  }
  auto path = WriteTemp("slice.jsonl", text);
  TraceReadOptions opt;
  opt.offset = 3;
  opt.limit = 4;
  auto r = ReadTrace(path, opt);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0].timestamp_ms, 3);
  EXPECT_EQ((*r)[3].timestamp_ms, 6);
  EXPECT_EQ((*r)[0].id.value, 0u);
}

TEST(TraceReader, MissingFileIsNotFound) {
  auto r = ReadTrace("/nonexistent/trace.jsonl", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
}

TEST(TraceReader, WriteThenReadRoundTrips) {
  auto path = WriteTemp("rt.jsonl", std::string(kGood1) + "\n" + kGood2 + "\n");
  auto r = ReadTrace(path, {});
  ASSERT_TRUE(r.ok());
  auto out = path + ".out";
  ASSERT_TRUE(WriteTraceJsonl(out, *r).ok());
  auto again = ReadTrace(out, {});
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->size(), 2u);
  EXPECT_EQ((*again)[0].hash_ids.size(), 2u);
  EXPECT_EQ((*again)[1].output_length, 1);
}

}  // namespace
}  // namespace mooncake::trace
