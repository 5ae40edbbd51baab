// What `mooncake eval` derives from its options for the simulator: the store master (from a
// live config's store ranks, or a global pool) and vLLM's limits, with errors naming the option.
#include "eval/eval_options.h"

#include <gtest/gtest.h>

#include "engine/cost_model.h"

namespace mooncake::eval {
namespace {

const std::string kRoot = MOONCAKE_SOURCE_DIR;

Result<EvalOptions> Parse(std::vector<std::string> args) {
  std::string help;
  args.push_back("--presets.dir=" + kRoot + "/configs");
  return ParseEvalOptions(args, {}, &help);
}

// configs/serve/small.ini: roles store:1, store.dram 512MiB, the live job's kv_scale 1/8192.
TEST(EvalOptions, LiveConfigWithStoreRanksRunsTheStoreMasterAsTheLiveJobSizesIt) {
  auto o = Parse({"--config", kRoot + "/configs/serve/small.ini", "--time_scale", "4"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->sched.scheduler.prefill_instances, 2);
  EXPECT_EQ(o->store.ranks, 1);
  EXPECT_EQ(o->store.rank_bytes, 512ull << 20);
  // 160 MiB x 0.000122 / 80 layers = 255.9 B, rounded down to 8: 248 B a layer.
  EXPECT_EQ(o->store.block_bytes, 248u * 80);
  EXPECT_EQ(o->store.replicas, 1u);
  // The live master's 10 s lease runs on wall time: 40 s of model time at time scale 4.
  EXPECT_EQ(o->store.master.lease, std::chrono::seconds(40));
  EXPECT_EQ(ToSimConfig(*o).store.ranks, 1);
  auto v = Parse({"--config", kRoot + "/configs/serve/small.ini", "--system", "vllm"});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(ToSimConfig(*v).store.ranks, 0);  // vLLM has no global store
}

TEST(EvalOptions, GlobalPoolRunsTheStoreMasterOverThePrefillNodes) {
  auto o = Parse({"--config", kRoot + "/configs/paper/fig9_cache_capacity.ini",
                  "--store.capacity_blocks", "1000"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->store.ranks, 8);
  EXPECT_EQ(o->store.block_bytes, 160ull << 20);
  EXPECT_EQ(o->store.rank_bytes, 125 * (160ull << 20));
  auto plain = Parse({"--config", kRoot + "/configs/eval/mooncake.ini"});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->store.ranks, 0);  // per-instance caches: no store master
}

TEST(EvalOptions, VllmLimitsAreCheckedNamingTheOption) {
  auto o = Parse({"--config", kRoot + "/configs/eval/vllm.ini"});
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->vllm.max_num_batched_tokens, 0);  // auto
  EXPECT_EQ(o->vllm.max_num_seqs, 256);
  for (auto [args, key] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--system", "vllm", "--vllm.max_num_batched_tokens", "lots"},
            "vllm.max_num_batched_tokens"},
           {{"--system", "vllm", "--vllm.max_num_batched_tokens", "4096"},
            "vllm.max_num_batched_tokens"},
           {{"--system", "vllm", "--vllm.max_num_seqs", "0"}, "vllm.max_num_seqs"},
           {{"--system", "vllm_chunked", "--prefill.chunk_tokens", "512"}, "prefill.chunk_tokens"},
           {{"--roles", "conductor:1 store:1 prefill:1 decode:1", "--store.dram", "1KiB"},
            "store.dram"},
           {{"--kv_scale", "2"}, "kv_scale"}}) {
    auto bad = Parse(args);
    ASSERT_FALSE(bad.ok()) << key;
    EXPECT_NE(bad.status().message().find(key), std::string::npos) << bad.status().message();
  }
}

}  // namespace
}  // namespace mooncake::eval
