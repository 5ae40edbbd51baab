// The conductor's block-level global KV index: which prefill instance holds which block.
//
// Each prefill instance has an LRU cache of `capacity_blocks` (its DRAM), or, with
// `shared_pool`, all instances see one global LRU pool of that capacity. The index answers
// prefix queries (longest prefix held by one instance, longest held anywhere) and keeps a
// replica count per block. Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "conductor/lru_block_cache.h"

namespace mooncake::conductor {

struct BestPrefix {
  int blocks = 0;     // longest prefix held by a single instance
  int instance = -1;  // the lowest-numbered instance holding it (-1 when blocks == 0)
};

class KvIndex {
 public:
  KvIndex(int instances, uint64_t capacity_blocks, bool shared_pool);

  int instances() const { return instances_; }
  bool shared_pool() const { return shared_pool_; }
  int LocalPrefix(int instance, std::span<const BlockHash> blocks) const;
  BestPrefix FindBestPrefix(std::span<const BlockHash> blocks) const;
  // Inserts (or refreshes) blocks on an instance in order, so the last one is the most
  // recently used; returns how many blocks were evicted.
  uint64_t Store(int instance, std::span<const BlockHash> blocks);
  // Refreshes the recency of the blocks the instance holds (a cache hit).
  void Touch(int instance, std::span<const BlockHash> blocks);
  // `block` is gone everywhere (the store lost every replica of it): no instance holds it.
  void Forget(BlockHash block);
  // The instance died: what it held is gone (no-op with a shared pool, which outlives it).
  void DropInstance(int instance);
  // Instances holding `block` (1 in shared-pool mode when held).
  int Replicas(BlockHash block) const;
  // Blocks held, counting each replica.
  uint64_t Occupancy() const;
  uint64_t evictions() const { return evictions_; }

 private:
  LruBlockCache& CacheOf(int instance) { return caches_[shared_pool_ ? 0 : instance]; }
  const LruBlockCache& CacheOf(int instance) const { return caches_[shared_pool_ ? 0 : instance]; }

  int instances_;
  bool shared_pool_;
  std::vector<LruBlockCache> caches_;
  std::unordered_map<uint64_t, int> replicas_;
  std::vector<BlockHash> scratch_;
  uint64_t evictions_ = 0;
};

}  // namespace mooncake::conductor
