// An LRU set of KV blocks with a capacity in blocks: one instance's cache, or one global pool.
// Not thread-safe; owned by the conductor's scheduling thread (or the simulator).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/ids.h"
#include "conductor/flat_id_map.h"

namespace mooncake::conductor {

class LruBlockCache {
 public:
  // capacity_blocks == 0 means unbounded.
  explicit LruBlockCache(uint64_t capacity_blocks);

  bool Contains(BlockHash block) const { return index_.Contains(block.value); }
  void Prefetch(BlockHash block) const { index_.Prefetch(block.value); }
  // Number of leading blocks of `blocks` that are all held.
  int PrefixLength(std::span<const BlockHash> blocks) const;
  // Makes `block` the most recently used, inserting it when absent; when over capacity, the
  // least recently used block is evicted and appended to `evicted` (if not null). Returns
  // whether `block` was absent.
  bool Insert(BlockHash block, std::vector<BlockHash>* evicted);
  // Makes `block` the most recently used if held; returns whether it was.
  bool Touch(BlockHash block);

  // Removes `block` if held; returns whether it was.
  bool Erase(BlockHash block);
  // Empties the cache (its instance died); appends every block it held to `dropped`.
  void Clear(std::vector<BlockHash>* dropped);

  uint64_t size() const { return index_.size(); }
  uint64_t capacity() const { return capacity_; }

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  struct Node {
    uint64_t block;
    uint32_t prev, next;
  };
  void Unlink(uint32_t n);
  void PushFront(uint32_t n);

  uint64_t capacity_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> free_;
  uint32_t head_ = kNil;       // most recently used
  uint32_t tail_ = kNil;       // least recently used
  FlatIdMap<uint32_t> index_;  // block -> node
};

}  // namespace mooncake::conductor
