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
  auto it = index_.find(block.value);
  if (it == index_.end()) return false;
  if (it->second != head_) {
    Unlink(it->second);
    PushFront(it->second);
  }
  return true;
}

void LruBlockCache::Insert(BlockHash block, std::vector<BlockHash>* evicted) {
  if (Touch(block)) return;
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
  index_.emplace(block.value, n);
  if (capacity_ != 0 && index_.size() > capacity_) {
    const uint32_t victim = tail_;
    Unlink(victim);
    index_.erase(nodes_[victim].block);
    if (evicted != nullptr) evicted->push_back(BlockHash{nodes_[victim].block});
    free_.push_back(victim);
  }
}

bool LruBlockCache::Erase(BlockHash block) {
  auto it = index_.find(block.value);
  if (it == index_.end()) return false;
  Unlink(it->second);
  free_.push_back(it->second);
  index_.erase(it);
  return true;
}

void LruBlockCache::Clear(std::vector<BlockHash>* dropped) {
  for (const auto& [block, node] : index_) dropped->push_back(BlockHash{block});
  nodes_.clear();
  free_.clear();
  index_.clear();
  head_ = tail_ = kNil;
}

}  // namespace mooncake::conductor
