#include "conductor/kv_index.h"

#include <algorithm>

namespace mooncake::conductor {

std::span<const int32_t> KvIndex::IdsOf(const HolderSet& h) const {
  if (h.size <= h.in_place.size()) return {h.in_place.data(), h.size};
  return overflow_[h.overflow];
}

bool KvIndex::Insert(HolderSet& h, int32_t instance) {
  if (h.size < h.in_place.size()) {
    int32_t* end = h.in_place.data() + h.size;
    int32_t* at = std::lower_bound(h.in_place.data(), end, instance);
    if (at != end && *at == instance) return false;
    std::move_backward(at, end, end + 1);
    *at = instance;
    ++h.size;
    return true;
  }
  if (h.size == h.in_place.size()) {  // the fourth: move the list out of place
    const auto ids = h.in_place;
    if (std::binary_search(ids.begin(), ids.end(), instance)) return false;
    uint32_t slot;
    if (free_overflow_.empty()) {
      slot = static_cast<uint32_t>(overflow_.size());
      overflow_.emplace_back();
    } else {
      slot = free_overflow_.back();
      free_overflow_.pop_back();
    }
    overflow_[slot].assign(ids.begin(), ids.end());
    h.overflow = slot;
  }
  std::vector<int32_t>& v = overflow_[h.overflow];
  auto at = std::lower_bound(v.begin(), v.end(), instance);
  if (at != v.end() && *at == instance) return false;
  v.insert(at, instance);
  ++h.size;
  return true;
}

bool KvIndex::Erase(HolderSet& h, int32_t instance) {
  if (h.size <= h.in_place.size()) {
    int32_t* end = h.in_place.data() + h.size;
    int32_t* at = std::lower_bound(h.in_place.data(), end, instance);
    if (at == end || *at != instance) return false;
    std::move(at + 1, end, at);
    --h.size;
    return true;
  }
  std::vector<int32_t>& v = overflow_[h.overflow];
  auto at = std::lower_bound(v.begin(), v.end(), instance);
  if (at == v.end() || *at != instance) return false;
  v.erase(at);
  --h.size;
  if (h.size == h.in_place.size()) {  // back in place
    const uint32_t slot = h.overflow;
    std::copy(v.begin(), v.end(), h.in_place.begin());
    v.clear();
    free_overflow_.push_back(slot);
  }
  return true;
}

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
  while (bound < static_cast<int>(blocks.size()) && holders_.Contains(blocks[bound].value)) ++bound;
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
    const HolderSet* h = holders_.Find(blocks[j].value);
    if (h == nullptr) break;  // nobody holds block j: no prefix is longer than j
    if (h->size > few) continue;
    // Whoever holds more than j leading blocks holds block j: one of these few.
    for (int32_t i : IdsOf(*h)) {
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
  const HolderSet* fewest = nullptr;
  for (int m = 0; m < length; ++m) {
    const HolderSet* h = holders_.Find(blocks[m].value);
    if (h == nullptr) return -1;
    if (fewest == nullptr || h->size < fewest->size) fewest = h;
  }
  for (int32_t i : IdsOf(*fewest)) {
    if (caches_[i].PrefixLength(blocks.first(length)) == length) return i;
  }
  return -1;
}

void KvIndex::AddHolder(BlockHash block, int instance) {
  HolderSet& h = holders_.FindOrInsert(block.value);
  if (!Insert(h, instance)) return;
  if (listener_ != nullptr) listener_->OnHolderAdded(block, instance, IdsOf(h));
}

void KvIndex::RemoveHolder(BlockHash block, int instance) {
  HolderSet* h = holders_.Find(block.value);
  if (h == nullptr || !Erase(*h, instance)) return;
  if (listener_ != nullptr) listener_->OnHolderRemoved(block, instance, IdsOf(*h));
  if (h->size == 0) holders_.Erase(block.value);
}

uint64_t KvIndex::Store(int instance, std::span<const BlockHash> blocks) {
  LruBlockCache& cache = CacheOf(instance);
  const int holder = shared_pool_ ? 0 : instance;
  scratch_.clear();
  for (size_t k = 0; k < blocks.size(); ++k) {
    const BlockHash b = blocks[k];
    if (k + 2 < blocks.size()) {  // overlap the next blocks' cache misses with this one
      cache.Prefetch(blocks[k + 2]);
      holders_.Prefetch(blocks[k + 2].value);
    }
    const size_t evicted_before = scratch_.size();
    if (cache.Insert(b, &scratch_)) AddHolder(b, holder);
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
  const HolderSet* h = holders_.Find(block.value);
  return h == nullptr ? 0 : static_cast<int>(h->size);
}

std::span<const int32_t> KvIndex::Holders(BlockHash block) const {
  const HolderSet* h = holders_.Find(block.value);
  return h == nullptr ? std::span<const int32_t>() : IdsOf(*h);
}

uint64_t KvIndex::Occupancy() const {
  uint64_t n = 0;
  for (const auto& c : caches_) n += c.size();
  return n;
}

void KvIndex::Forget(BlockHash block) {
  for (LruBlockCache& cache : caches_) cache.Erase(block);
  HolderSet* h = holders_.Find(block.value);
  if (h == nullptr) return;
  // Last to first, each removal reported, so that a listener sees the list shrink to empty.
  while (h->size > 0) {
    const int32_t instance = IdsOf(*h).back();
    Erase(*h, instance);
    if (listener_ != nullptr) listener_->OnHolderRemoved(block, instance, IdsOf(*h));
  }
  holders_.Erase(block.value);
}

void KvIndex::DropInstance(int instance) {
  if (shared_pool_) return;
  scratch_.clear();
  caches_.at(instance).Clear(&scratch_);
  for (BlockHash b : scratch_) RemoveHolder(b, instance);
}

}  // namespace mooncake::conductor
