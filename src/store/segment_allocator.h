// SegmentAllocator: O(1) allocate and free inside one store rank's registered DRAM segment.
//
// A TLSF-style (two-level segregated fit) allocator whose bookkeeping lives outside the segment:
// the master allocates a remote rank's memory, so it must never write headers into it. Sizes are
// in 64-byte granules (every offset is 64-byte aligned); free blocks sit in 64 x 16 size-class
// lists indexed by two bitmaps, so finding a fit, splitting and coalescing are constant time.
// Allocate rounds the request up to the next size class before searching ("good fit"), and falls
// back to scanning the exact class when that fails, so any request that fits the largest free
// region succeeds. A request that fits nowhere returns NoSpace and changes nothing.
//
// Not thread-safe: the owner (the metadata master) serialises calls.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"

namespace mooncake::store {

// One live allocation. `handle` names the block inside the allocator; Free needs it back.
struct Allocation {
  uint64_t offset = 0;  // bytes from the segment base, a multiple of kAlignment
  uint64_t size = 0;    // bytes reserved (the request rounded up to kAlignment)
  uint32_t handle = 0;
};

struct AllocatorStats {
  uint64_t capacity = 0;
  uint64_t used = 0;
  uint64_t free = 0;
  uint64_t largest_free = 0;
  uint64_t allocations = 0;
  // 1 - largest_free / free: 0 when all free space is one region, towards 1 when it is crumbs.
  double fragmentation = 0.0;
};

class SegmentAllocator {
 public:
  static constexpr uint64_t kAlignment = 64;

  // `capacity` bytes, rounded down to kAlignment.
  explicit SegmentAllocator(uint64_t capacity);

  // NoSpace when no free region holds `size` bytes; InvalidArgument for size 0.
  Result<Allocation> Allocate(uint64_t size);
  // Reserves exactly [offset, offset + bytes rounded up to kAlignment): a standby master
  // rebuilding the allocations its active one journaled (store/journal.h). InvalidArgument when
  // `offset` is not aligned or the range is not wholly free. Restoring in ascending offset order
  // finds each range at once (the free tail of the previous one); otherwise it scans the blocks.
  Result<Allocation> AllocateAt(uint64_t offset, uint64_t bytes);
  // InvalidArgument when `a` is not a live allocation of this allocator (double free, forged).
  Status Free(const Allocation& a);

  uint64_t capacity() const { return capacity_; }
  uint64_t used() const { return used_; }
  uint64_t free_bytes() const { return capacity_ - used_; }
  // Largest single free region, in bytes (scans one size-class list).
  uint64_t LargestFree() const;
  AllocatorStats Stats() const;

 private:
  static constexpr int kSlLog2 = 4;
  static constexpr int kSlCount = 1 << kSlLog2;
  static constexpr int kFlCount = 64;
  static constexpr uint32_t kNil = UINT32_MAX;

  struct Node {
    uint64_t offset = 0;  // granules
    uint64_t size = 0;    // granules
    uint32_t prev_phys = kNil, next_phys = kNil;
    uint32_t prev_free = kNil, next_free = kNil;
    bool free = false;
    bool live = false;  // slot in use (as a free or allocated block)
  };

  static void Mapping(uint64_t size, int* fl, int* sl);
  uint32_t FindSuitable(uint64_t size) const;
  uint32_t NewNode();
  void ReleaseNode(uint32_t n);
  void InsertFree(uint32_t n);
  void RemoveFree(uint32_t n);
  // Splits free block `n` at granule `at` (inside it): the tail becomes a new free block.
  uint32_t SplitFree(uint32_t n, uint64_t at);

  uint64_t capacity_ = 0;
  uint64_t used_ = 0;
  uint64_t live_allocations_ = 0;
  uint64_t fl_bitmap_ = 0;
  uint32_t sl_bitmap_[kFlCount] = {};
  uint32_t heads_[kFlCount][kSlCount];
  std::vector<Node> nodes_;
  std::vector<uint32_t> spare_nodes_;
  uint32_t restore_hint_ = kNil;  // AllocateAt: the free block after its last range
};

}  // namespace mooncake::store
