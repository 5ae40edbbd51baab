#include "conductor/kv_index.h"

namespace mooncake::conductor {

KvIndex::KvIndex(int instances, uint64_t capacity_blocks, bool shared_pool)
    : instances_(instances), shared_pool_(shared_pool) {
  caches_.assign(shared_pool ? 1 : static_cast<size_t>(instances), LruBlockCache(capacity_blocks));
}

int KvIndex::LocalPrefix(int instance, std::span<const BlockHash> blocks) const {
  return CacheOf(instance).PrefixLength(blocks);
}

BestPrefix KvIndex::FindBestPrefix(std::span<const BlockHash> blocks) const {
  BestPrefix best;
  if (shared_pool_) {
    best.blocks = caches_[0].PrefixLength(blocks);
    best.instance = best.blocks > 0 ? 0 : -1;
    return best;
  }
  // Cheap exit: a block nobody holds ends every instance's prefix.
  int bound = 0;
  while (bound < static_cast<int>(blocks.size()) && replicas_.count(blocks[bound].value) != 0)
    ++bound;
  if (bound == 0) return best;
  for (int i = 0; i < instances_; ++i) {
    const int n = caches_[i].PrefixLength(blocks.first(bound));
    if (n > best.blocks) {
      best = {n, i};
      if (n == bound) break;
    }
  }
  return best;
}

uint64_t KvIndex::Store(int instance, std::span<const BlockHash> blocks) {
  LruBlockCache& cache = CacheOf(instance);
  scratch_.clear();
  for (BlockHash b : blocks) {
    const bool had = cache.Contains(b);
    cache.Insert(b, &scratch_);
    if (!had) ++replicas_[b.value];
  }
  for (BlockHash b : scratch_) {
    auto it = replicas_.find(b.value);
    if (it != replicas_.end() && --it->second == 0) replicas_.erase(it);
  }
  evictions_ += scratch_.size();
  return scratch_.size();
}

void KvIndex::Touch(int instance, std::span<const BlockHash> blocks) {
  LruBlockCache& cache = CacheOf(instance);
  for (BlockHash b : blocks) cache.Touch(b);
}

int KvIndex::Replicas(BlockHash block) const {
  auto it = replicas_.find(block.value);
  return it == replicas_.end() ? 0 : it->second;
}

uint64_t KvIndex::Occupancy() const {
  uint64_t n = 0;
  for (const auto& c : caches_) n += c.size();
  return n;
}

void KvIndex::Forget(BlockHash block) {
  for (LruBlockCache& cache : caches_) cache.Erase(block);
  replicas_.erase(block.value);
}

void KvIndex::DropInstance(int instance) {
  if (shared_pool_) return;
  scratch_.clear();
  caches_.at(instance).Clear(&scratch_);
  for (BlockHash b : scratch_) {
    auto it = replicas_.find(b.value);
    if (it != replicas_.end() && --it->second == 0) replicas_.erase(it);
  }
}

}  // namespace mooncake::conductor
