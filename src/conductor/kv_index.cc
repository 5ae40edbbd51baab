#include "conductor/kv_index.h"

#include <algorithm>

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
  while (bound < static_cast<int>(blocks.size()) && holders_.count(blocks[bound].value) != 0)
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

void KvIndex::FindPrefixHolders(std::span<const BlockHash> blocks, size_t few,
                                PrefixHolders* out) const {
  out->deep.clear();
  out->best = {};
  const int len = static_cast<int>(blocks.size());
  int j = 0;
  for (; j < len; ++j) {
    auto it = holders_.find(blocks[j].value);
    if (it == holders_.end()) break;  // nobody holds block j: no prefix is longer than j
    if (it->second.size() > few) continue;
    // Whoever holds more than j leading blocks holds block j: one of these few.
    for (int32_t i : it->second) {
      const int n = caches_[i].PrefixLength(blocks);
      if (n > j) out->deep.emplace_back(i, n);
    }
    break;
  }
  out->depth = j + 1;
  if (!out->deep.empty()) {
    for (const auto& [i, n] : out->deep) {
      if (n > out->best.blocks) out->best = {n, i};  // ascending ids: the lowest one is kept
    }
    return;
  }
  // Nobody holds j + 1 blocks; every block before j has many holders.
  for (int length = std::min(j, len); length >= 1; --length) {
    const int i = LowestHolderOfPrefix(blocks, length);
    if (i >= 0) {
      out->best = {length, i};
      return;
    }
  }
}

int KvIndex::LowestHolderOfPrefix(std::span<const BlockHash> blocks, int length) const {
  const std::vector<int32_t>* fewest = nullptr;
  for (int m = 0; m < length; ++m) {
    auto it = holders_.find(blocks[m].value);
    if (it == holders_.end()) return -1;
    if (fewest == nullptr || it->second.size() < fewest->size()) fewest = &it->second;
  }
  for (int32_t i : *fewest) {
    if (caches_[i].PrefixLength(blocks.first(length)) == length) return i;
  }
  return -1;
}

void KvIndex::AddHolder(BlockHash block, int instance) {
  std::vector<int32_t>& h = holders_[block.value];
  auto at = std::lower_bound(h.begin(), h.end(), instance);
  if (at == h.end() || *at != instance) h.insert(at, instance);
}

void KvIndex::RemoveHolder(BlockHash block, int instance) {
  auto it = holders_.find(block.value);
  if (it == holders_.end()) return;
  std::vector<int32_t>& h = it->second;
  auto at = std::lower_bound(h.begin(), h.end(), instance);
  if (at != h.end() && *at == instance) h.erase(at);
  if (h.empty()) holders_.erase(it);
}

uint64_t KvIndex::Store(int instance, std::span<const BlockHash> blocks) {
  LruBlockCache& cache = CacheOf(instance);
  const int holder = shared_pool_ ? 0 : instance;
  scratch_.clear();
  for (BlockHash b : blocks) {
    const size_t evicted_before = scratch_.size();
    const bool had = cache.Contains(b);
    cache.Insert(b, &scratch_);
    if (!had) AddHolder(b, holder);
    // Evictions are applied at once: a block evicted and stored again in this call stays held.
    for (size_t e = evicted_before; e < scratch_.size(); ++e) RemoveHolder(scratch_[e], holder);
  }
  evictions_ += scratch_.size();
  return scratch_.size();
}

void KvIndex::Touch(int instance, std::span<const BlockHash> blocks) {
  LruBlockCache& cache = CacheOf(instance);
  for (BlockHash b : blocks) cache.Touch(b);
}

int KvIndex::Replicas(BlockHash block) const {
  auto it = holders_.find(block.value);
  return it == holders_.end() ? 0 : static_cast<int>(it->second.size());
}

std::span<const int32_t> KvIndex::Holders(BlockHash block) const {
  auto it = holders_.find(block.value);
  if (it == holders_.end()) return {};
  return it->second;
}

uint64_t KvIndex::Occupancy() const {
  uint64_t n = 0;
  for (const auto& c : caches_) n += c.size();
  return n;
}

void KvIndex::Forget(BlockHash block) {
  for (LruBlockCache& cache : caches_) cache.Erase(block);
  holders_.erase(block.value);
}

void KvIndex::DropInstance(int instance) {
  if (shared_pool_) return;
  scratch_.clear();
  caches_.at(instance).Clear(&scratch_);
  for (BlockHash b : scratch_) RemoveHolder(b, instance);
}

}  // namespace mooncake::conductor
