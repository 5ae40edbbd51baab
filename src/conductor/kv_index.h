// The conductor's block-level global KV index: which prefill instance holds which block.
//
// Each prefill instance has an LRU cache of `capacity_blocks` (its DRAM), or, with
// `shared_pool`, all instances see one global LRU pool of that capacity. The index answers
// prefix queries (longest prefix held by one instance, longest held anywhere) and keeps the
// holders of every block (instance ids, ascending), so that a query can start from the few
// instances that hold a block instead of asking every instance. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "conductor/flat_id_map.h"
#include "conductor/lru_block_cache.h"

namespace mooncake::conductor {

struct BestPrefix {
  int blocks = 0;     // longest prefix held by a single instance
  int instance = -1;  // the lowest-numbered instance holding it (-1 when blocks == 0)
  friend bool operator==(const BestPrefix&, const BestPrefix&) = default;
};

// Told of every change of a block's holder list (KvIndex::set_listener). `holders` is the list
// after the change, ascending.
class HolderListener {
 public:
  virtual void OnHolderAdded(BlockHash block, int instance, std::span<const int32_t> holders) = 0;
  virtual void OnHolderRemoved(BlockHash block, int instance, std::span<const int32_t> holders) = 0;

 protected:
  ~HolderListener() = default;
};

// The answer of KvIndex::FindPrefixHolders: every instance that holds `depth` or more leading
// blocks of the query is in `deep`, with its exact prefix length; every other instance holds
// fewer than `depth` leading blocks.
struct PrefixHolders {
  BestPrefix best;  // as FindBestPrefix
  int depth = 0;
  std::vector<std::pair<int, int>> deep;  // (instance, prefix length >= depth), by instance
};

class KvIndex {
 public:
  KvIndex(int instances, uint64_t capacity_blocks, bool shared_pool);

  int instances() const { return instances_; }
  bool shared_pool() const { return shared_pool_; }
  int LocalPrefix(int instance, std::span<const BlockHash> blocks) const;
  // Asks every instance (the reference the pruned search is checked against).
  BestPrefix FindBestPrefix(std::span<const BlockHash> blocks) const;
  // The same best prefix from the holder lists, plus the instances holding a long prefix:
  // `depth` is one past the first position whose block at most `few` instances hold (or one
  // past the longest prefix anyone could hold), so `deep` has at most `few` entries. Costs
  // O(few x prefix length) lookups instead of one prefix walk per instance. Per-instance caches
  // only (not shared_pool).
  void FindPrefixHolders(std::span<const BlockHash> blocks, size_t few, PrefixHolders* out) const;
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
  // Ids of the instances holding `block`, ascending (instance 0 stands for the shared pool).
  std::span<const int32_t> Holders(BlockHash block) const;
  // Blocks held, counting each replica.
  uint64_t Occupancy() const;
  uint64_t evictions() const { return evictions_; }
  // Every later holder change is reported to `listener` (not owned; null stops).
  void set_listener(HolderListener* listener) { listener_ = listener; }

 private:
  LruBlockCache& CacheOf(int instance) { return caches_[shared_pool_ ? 0 : instance]; }
  const LruBlockCache& CacheOf(int instance) const { return caches_[shared_pool_ ? 0 : instance]; }
  // The instances holding one block: up to three in place (most blocks have one or two
  // holders), more in overflow_[overflow]. 16 bytes, so that the table stays small.
  struct HolderSet {
    uint32_t size = 0;
    union {
      std::array<int32_t, 3> in_place{};
      uint32_t overflow;
    };
  };
  std::span<const int32_t> IdsOf(const HolderSet& h) const;
  bool Insert(HolderSet& h, int32_t instance);  // false when already there
  bool Erase(HolderSet& h, int32_t instance);   // false when not there
  void AddHolder(BlockHash block, int instance);
  void RemoveHolder(BlockHash block, int instance);
  // The lowest instance holding the first `length` blocks (all of whose holder lists are longer
  // than `few`), or -1 when none does.
  int LowestHolderOfPrefix(std::span<const BlockHash> blocks, int length) const;

  int instances_;
  bool shared_pool_;
  std::vector<LruBlockCache> caches_;
  FlatIdMap<HolderSet> holders_;                // block -> its holders, ascending
  std::vector<std::vector<int32_t>> overflow_;  // lists of more than three
  std::vector<uint32_t> free_overflow_;         // unused entries of overflow_
  std::vector<BlockHash> scratch_;
  uint64_t evictions_ = 0;
  HolderListener* listener_ = nullptr;
};

}  // namespace mooncake::conductor
