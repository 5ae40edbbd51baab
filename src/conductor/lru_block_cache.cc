#include "conductor/lru_block_cache.h"

namespace mooncake::conductor {

LruBlockCache::LruBlockCache(uint64_t capacity_blocks) : capacity_(capacity_blocks) {}

int LruBlockCache::PrefixLength(std::span<const BlockHash> blocks) const {
  int n = 0;
  for (BlockHash b : blocks) {
    if (!Contains(b)) break;
    ++n;
  }
  return n;
}

void LruBlockCache::Unlink(uint32_t n) {
  Node& node = nodes_[n];
  if (node.prev != kNil)
    nodes_[node.prev].next = node.next;
  else
    head_ = node.next;
  if (node.next != kNil)
    nodes_[node.next].prev = node.prev;
  else
    tail_ = node.prev;
}

void LruBlockCache::PushFront(uint32_t n) {
  nodes_[n].prev = kNil;
  nodes_[n].next = head_;
  if (head_ != kNil) nodes_[head_].prev = n;
  head_ = n;
  if (tail_ == kNil) tail_ = n;
}

bool LruBlockCache::Touch(BlockHash block) {
  const uint32_t* n = index_.Find(block.value);
  if (n == nullptr) return false;
  if (*n != head_) {
    Unlink(*n);
    PushFront(*n);
  }
  return true;
}

bool LruBlockCache::Insert(BlockHash block, std::vector<BlockHash>* evicted) {
  if (Touch(block)) return false;
  uint32_t n;
  if (!free_.empty()) {
    n = free_.back();
    free_.pop_back();
  } else {
    n = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back({});
  }
  nodes_[n].block = block.value;
  PushFront(n);
  index_.FindOrInsert(block.value) = n;
  if (capacity_ != 0 && index_.size() > capacity_) {
    const uint32_t victim = tail_;
    Unlink(victim);
    index_.Erase(nodes_[victim].block);
    if (evicted != nullptr) evicted->push_back(BlockHash{nodes_[victim].block});
    free_.push_back(victim);
  }
  return true;
}

bool LruBlockCache::Erase(BlockHash block) {
  const uint32_t* n = index_.Find(block.value);
  if (n == nullptr) return false;
  const uint32_t node = *n;
  Unlink(node);
  free_.push_back(node);
  index_.Erase(block.value);
  return true;
}

void LruBlockCache::Clear(std::vector<BlockHash>* dropped) {
  index_.ForEach([&](uint64_t block, uint32_t) { dropped->push_back(BlockHash{block}); });
  nodes_.clear();
  free_.clear();
  index_.Clear();
  head_ = tail_ = kNil;
}

}  // namespace mooncake::conductor
