#include "store/segment_allocator.h"

#include <bit>
#include <string>

namespace mooncake::store {

namespace {
constexpr uint64_t kG = SegmentAllocator::kAlignment;
int Msb(uint64_t x) { return 63 - std::countl_zero(x); }
}  // namespace

SegmentAllocator::SegmentAllocator(uint64_t capacity) : capacity_(capacity / kG * kG) {
  for (auto& row : heads_) {
    for (auto& h : row) h = kNil;
  }
  if (capacity_ == 0) return;
  uint32_t n = NewNode();
  nodes_[n].offset = 0;
  nodes_[n].size = capacity_ / kG;
  nodes_[n].free = true;
  InsertFree(n);
}

// Class of a size in granules: fl 0 holds sizes 0..15 one per list; fl k >= 1 holds
// [2^(k+3), 2^(k+4)) split into 16 equal lists.
void SegmentAllocator::Mapping(uint64_t size, int* fl, int* sl) {
  if (size < kSlCount) {
    *fl = 0;
    *sl = static_cast<int>(size);
    return;
  }
  int f = Msb(size);
  *sl = static_cast<int>((size >> (f - kSlLog2)) & (kSlCount - 1));
  *fl = f - kSlLog2 + 1;
}

uint32_t SegmentAllocator::FindSuitable(uint64_t size) const {
  // Round up to the next class so every block in the chosen list is large enough.
  uint64_t rounded = size;
  if (size >= kSlCount) rounded = size + (uint64_t{1} << (Msb(size) - kSlLog2)) - 1;
  int fl = 0, sl = 0;
  Mapping(rounded, &fl, &sl);
  if (fl < kFlCount) {
    uint32_t sl_map = sl_bitmap_[fl] & (~0u << sl);
    if (sl_map == 0) {
      uint64_t fl_map = fl + 1 < kFlCount ? fl_bitmap_ & (~uint64_t{0} << (fl + 1)) : 0;
      if (fl_map != 0) {
        fl = std::countr_zero(fl_map);
        sl_map = sl_bitmap_[fl];
      }
    }
    if (sl_map != 0) return heads_[fl][std::countr_zero(sl_map)];
  }
  // Near-full fallback: the exact class may still hold a block that is big enough.
  Mapping(size, &fl, &sl);
  for (uint32_t n = heads_[fl][sl]; n != kNil; n = nodes_[n].next_free) {
    if (nodes_[n].size >= size) return n;
  }
  return kNil;
}

Result<Allocation> SegmentAllocator::Allocate(uint64_t bytes) {
  if (bytes == 0) return InvalidArgument("allocation of 0 bytes");
  if (bytes > capacity_) {
    return NoSpace("object of " + std::to_string(bytes) + " B exceeds segment capacity " +
                   std::to_string(capacity_) + " B");
  }
  uint64_t size = (bytes + kG - 1) / kG;
  uint32_t n = FindSuitable(size);
  if (n == kNil) {
    return NoSpace("no free region of " + std::to_string(bytes) + " B (largest free " +
                   std::to_string(LargestFree()) + " B)");
  }
  RemoveFree(n);
  if (nodes_[n].size > size) {  // split: the tail stays free
    uint32_t rest = NewNode();  // may reallocate nodes_: index, never hold references
    nodes_[rest].offset = nodes_[n].offset + size;
    nodes_[rest].size = nodes_[n].size - size;
    nodes_[rest].free = true;
    nodes_[rest].prev_phys = n;
    nodes_[rest].next_phys = nodes_[n].next_phys;
    if (nodes_[n].next_phys != kNil) nodes_[nodes_[n].next_phys].prev_phys = rest;
    nodes_[n].next_phys = rest;
    nodes_[n].size = size;
    InsertFree(rest);
  }
  nodes_[n].free = false;
  used_ += size * kG;
  ++live_allocations_;
  return Allocation{nodes_[n].offset * kG, size * kG, n};
}

uint32_t SegmentAllocator::SplitFree(uint32_t n, uint64_t at) {
  RemoveFree(n);
  uint32_t rest = NewNode();  // may reallocate nodes_: index, never hold references
  nodes_[rest].offset = at;
  nodes_[rest].size = nodes_[n].offset + nodes_[n].size - at;
  nodes_[rest].free = true;
  nodes_[rest].prev_phys = n;
  nodes_[rest].next_phys = nodes_[n].next_phys;
  if (nodes_[n].next_phys != kNil) nodes_[nodes_[n].next_phys].prev_phys = rest;
  nodes_[n].next_phys = rest;
  nodes_[n].size = at - nodes_[n].offset;
  InsertFree(n);
  InsertFree(rest);
  return rest;
}

Result<Allocation> SegmentAllocator::AllocateAt(uint64_t offset, uint64_t bytes) {
  if (bytes == 0) return InvalidArgument("allocation of 0 bytes");
  if (offset % kG != 0 || offset > capacity_ || bytes > capacity_ - offset) {
    return InvalidArgument("range at offset " + std::to_string(offset) + " of " +
                           std::to_string(bytes) + " B is not inside the segment of " +
                           std::to_string(capacity_) + " B (or not aligned)");
  }
  const uint64_t start = offset / kG;
  const uint64_t size = (bytes + kG - 1) / kG;
  auto covers = [&](uint32_t n) {
    const Node& node = nodes_[n];
    return node.live && node.free && node.offset <= start &&
           start + size <= node.offset + node.size;
  };
  uint32_t n = restore_hint_ < nodes_.size() && covers(restore_hint_) ? restore_hint_ : kNil;
  for (uint32_t i = 0; n == kNil && i < nodes_.size(); ++i) {
    if (covers(i)) n = i;
  }
  if (n == kNil) {
    return InvalidArgument("range at offset " + std::to_string(offset) + " of " +
                           std::to_string(bytes) + " B is not free");
  }
  if (nodes_[n].offset < start) n = SplitFree(n, start);  // the head stays free
  restore_hint_ = kNil;
  if (nodes_[n].size > size) restore_hint_ = SplitFree(n, start + size);  // so does the tail
  RemoveFree(n);
  nodes_[n].free = false;
  used_ += size * kG;
  ++live_allocations_;
  return Allocation{nodes_[n].offset * kG, size * kG, n};
}

Status SegmentAllocator::Free(const Allocation& a) {
  uint32_t n = a.handle;
  if (n >= nodes_.size() || !nodes_[n].live || nodes_[n].free ||
      nodes_[n].offset * kG != a.offset || nodes_[n].size * kG != a.size) {
    return InvalidArgument("free of an unknown allocation at offset " + std::to_string(a.offset));
  }
  used_ -= nodes_[n].size * kG;
  --live_allocations_;
  nodes_[n].free = true;
  // Merges `right`, the physical neighbour after `left`, into `left` and releases its node.
  auto absorb = [this](uint32_t left, uint32_t right) {
    nodes_[left].size += nodes_[right].size;
    nodes_[left].next_phys = nodes_[right].next_phys;
    if (nodes_[right].next_phys != kNil) nodes_[nodes_[right].next_phys].prev_phys = left;
    ReleaseNode(right);
  };
  uint32_t prev = nodes_[n].prev_phys;
  if (prev != kNil && nodes_[prev].free) {
    RemoveFree(prev);
    absorb(prev, n);
    n = prev;
  }
  uint32_t next = nodes_[n].next_phys;
  if (next != kNil && nodes_[next].free) {
    RemoveFree(next);
    absorb(n, next);
  }
  InsertFree(n);
  return Status::Ok();
}

uint64_t SegmentAllocator::LargestFree() const {
  if (fl_bitmap_ == 0) return 0;
  int fl = Msb(fl_bitmap_);
  int sl = 31 - std::countl_zero(sl_bitmap_[fl]);
  uint64_t best = 0;
  for (uint32_t n = heads_[fl][sl]; n != kNil; n = nodes_[n].next_free) {
    if (nodes_[n].size > best) best = nodes_[n].size;
  }
  return best * kG;
}

AllocatorStats SegmentAllocator::Stats() const {
  AllocatorStats s;
  s.capacity = capacity_;
  s.used = used_;
  s.free = capacity_ - used_;
  s.largest_free = LargestFree();
  s.allocations = live_allocations_;
  s.fragmentation = s.free == 0 ? 0.0 : 1.0 - static_cast<double>(s.largest_free) / s.free;
  return s;
}

uint32_t SegmentAllocator::NewNode() {
  uint32_t n;
  if (!spare_nodes_.empty()) {
    n = spare_nodes_.back();
    spare_nodes_.pop_back();
    nodes_[n] = Node{};
  } else {
    n = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  nodes_[n].live = true;
  return n;
}

void SegmentAllocator::ReleaseNode(uint32_t n) {
  nodes_[n].live = false;
  spare_nodes_.push_back(n);
}

void SegmentAllocator::InsertFree(uint32_t n) {
  int fl = 0, sl = 0;
  Mapping(nodes_[n].size, &fl, &sl);
  nodes_[n].prev_free = kNil;
  nodes_[n].next_free = heads_[fl][sl];
  if (heads_[fl][sl] != kNil) nodes_[heads_[fl][sl]].prev_free = n;
  heads_[fl][sl] = n;
  fl_bitmap_ |= uint64_t{1} << fl;
  sl_bitmap_[fl] |= 1u << sl;
}

void SegmentAllocator::RemoveFree(uint32_t n) {
  int fl = 0, sl = 0;
  Mapping(nodes_[n].size, &fl, &sl);
  Node& node = nodes_[n];
  if (node.prev_free != kNil) nodes_[node.prev_free].next_free = node.next_free;
  if (node.next_free != kNil) nodes_[node.next_free].prev_free = node.prev_free;
  if (heads_[fl][sl] == n) {
    heads_[fl][sl] = node.next_free;
    if (heads_[fl][sl] == kNil) {
      sl_bitmap_[fl] &= ~(1u << sl);
      if (sl_bitmap_[fl] == 0) fl_bitmap_ &= ~(uint64_t{1} << fl);
    }
  }
  node.prev_free = node.next_free = kNil;
}

}  // namespace mooncake::store
