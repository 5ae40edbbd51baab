// The metadata master's hot-path containers (issue 34): a pool with stable addresses, an
// open-addressing table over it keyed by a precomputed 64-bit key hash, and an intrusive LRU
// list. In steady state (as many objects come as go) none of them allocates: freed objects and
// list nodes are reused, and a reused object keeps its key string's and vectors' capacity.
//
// The node-based std::unordered_map<std::string, Object> they replace cost a cache miss per
// lookup plus a malloc per key for the node, the key and every side structure that named it
// (docs/STORE.md "Small objects and the metadata rate").
//
// Not thread-safe: the master serialises calls.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mooncake::store {

// The hash the object table is keyed by (XXH3 of the key bytes).
uint64_t KeyHash(std::string_view key);

// Items that never move (lists and the table point at them), allocated 1024 at a time and
// reused last-freed-first. An item is constructed once; Take hands out an old one as it was
// left (the caller resets what it needs: strings and vectors keep their capacity that way).
template <typename T>
class StablePool {
 public:
  static constexpr uint32_t kChunk = 1024;

  // The item and its id (0-based, dense: At(id) finds it again).
  T* Take(uint32_t* id) {
    if (free_.empty()) {
      chunks_.push_back(std::make_unique<T[]>(kChunk));
      const auto base = static_cast<uint32_t>((chunks_.size() - 1) * kChunk);
      for (uint32_t i = kChunk; i > 0; --i) free_.push_back(base + i - 1);
    }
    *id = free_.back();
    free_.pop_back();
    return &At(*id);
  }
  void Give(uint32_t id) { free_.push_back(id); }
  T& At(uint32_t id) const { return chunks_[id / kChunk][id % kChunk]; }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  std::vector<uint32_t> free_;
};

// A doubly linked list of T* whose nodes come from the list's own pool: PushFront, Erase and
// MoveToFront are O(1) and allocate nothing once the pool has grown to the list's largest size.
template <typename T>
class LruList {
 public:
  struct Node {
    T* item = nullptr;
    Node* prev = nullptr;  // towards the front (more recently used)
    Node* next = nullptr;  // towards the back
    uint32_t id = 0;
  };

  Node* PushFront(T* item) {
    uint32_t id = 0;
    Node* n = pool_.Take(&id);
    *n = Node{item, nullptr, head_, id};
    (head_ != nullptr ? head_->prev : tail_) = n;
    head_ = n;
    return n;
  }
  void Erase(Node* n) {
    Detach(n);
    pool_.Give(n->id);
  }
  void MoveToFront(Node* n) {
    if (n == head_) return;
    Detach(n);
    n->prev = nullptr;
    n->next = head_;
    (head_ != nullptr ? head_->prev : tail_) = n;
    head_ = n;
  }
  Node* Back() const { return tail_; }  // least recently used; walk on with ->prev

 private:
  void Detach(Node* n) {
    (n->prev != nullptr ? n->prev->next : head_) = n->next;
    (n->next != nullptr ? n->next->prev : tail_) = n->prev;
  }
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  StablePool<Node> pool_;
};

// Objects by key. T has `std::string key`, `uint64_t hash` and `uint32_t index_id`, and a
// Reset() that clears everything else for reuse. Linear probing over slots of 8 bytes (32 bits
// of the hash, which also give the home slot, and the pool id), at most half full, erased by
// shifting the run back (no tombstones), so a lookup touches one or two cache lines of slots and
// then the object itself to compare the key.
template <typename T>
class ObjectTable {
 public:
  ObjectTable() : slots_(kMinSlots) {}

  T* Find(std::string_view key, uint64_t hash) const {
    const uint32_t tag = Tag(hash);
    for (size_t i = tag & Mask();; i = (i + 1) & Mask()) {
      const Slot s = slots_[i];
      if (s.id == 0) return nullptr;
      if (s.tag == tag) {
        T& o = pool_.At(s.id - 1);
        if (o.key == key) return &o;
      }
    }
  }

  // A new object for `key`, which must not be in the table; fields other than key, hash and
  // index_id are as Reset() left them.
  T* Insert(std::string_view key, uint64_t hash) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    uint32_t id = 0;
    T* o = pool_.Take(&id);
    o->Reset();
    o->key.assign(key.data(), key.size());
    o->hash = hash;
    o->index_id = id;
    Place(Slot{Tag(hash), id + 1});
    ++size_;
    return o;
  }

  void Erase(T* o) {
    size_t i = Tag(o->hash) & Mask();
    while (slots_[i].id != o->index_id + 1) i = (i + 1) & Mask();
    // Backward shift: move later entries of the run into the hole when their home slot is not
    // between the hole and them (cyclically), so every entry stays reachable from its home.
    for (size_t j = (i + 1) & Mask(); slots_[j].id != 0; j = (j + 1) & Mask()) {
      const size_t home = slots_[j].tag & Mask();
      if (((j - home) & Mask()) >= ((j - i) & Mask())) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    pool_.Give(o->index_id);
    --size_;
  }

  // Starts fetching the slot a lookup of `hash` reads first.
  void Prefetch(uint64_t hash) const { __builtin_prefetch(&slots_[Tag(hash) & Mask()]); }

  size_t size() const { return size_; }

  // Calls f(T&) for every object until it returns false. f must not insert or erase.
  template <typename F>
  void ForEach(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.id != 0 && !f(pool_.At(s.id - 1))) return;
    }
  }

 private:
  struct Slot {
    uint32_t tag = 0;
    uint32_t id = 0;  // pool id + 1; 0: empty
  };
  static constexpr size_t kMinSlots = 1024;
  static uint32_t Tag(uint64_t hash) { return static_cast<uint32_t>(hash >> 32); }
  size_t Mask() const { return slots_.size() - 1; }

  void Place(Slot s) {
    size_t i = s.tag & Mask();
    while (slots_[i].id != 0) i = (i + 1) & Mask();
    slots_[i] = s;
  }
  void Grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.id != 0) Place(s);
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  StablePool<T> pool_;
};

}  // namespace mooncake::store
