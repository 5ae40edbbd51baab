// Address-range lookup of registered regions, local or imported from peers. Used by every
// backend to reject an unregistered or out-of-range remote address before touching memory.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>

namespace mooncake::transport {

// Maps [base, base+length) -> Value. Thread-safe.
template <typename Value>
class RegionTable {
 public:
  // Returns the value a region at the same base had, if it replaced one.
  std::optional<Value> Insert(uint64_t base, uint64_t length, Value value) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::optional<Value> old;
    auto it = regions_.find(base);
    if (it != regions_.end()) old = std::move(it->second.value);
    regions_[base] = Entry{length, std::move(value)};
    return old;
  }
  bool Erase(uint64_t base) {
    std::lock_guard<std::mutex> lock(mutex_);
    return regions_.erase(base) > 0;
  }
  struct Match {
    uint64_t base;
    uint64_t length;
    Value value;
  };
  // The region that wholly contains [addr, addr+length), if any.
  std::optional<Match> FindRegion(uint64_t addr, uint64_t length) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = regions_.upper_bound(addr);
    if (it == regions_.begin()) return std::nullopt;
    --it;
    uint64_t base = it->first;
    if (addr < base || length > it->second.length || addr - base > it->second.length - length) {
      return std::nullopt;
    }
    return Match{base, it->second.length, it->second.value};
  }
  std::optional<Value> Find(uint64_t addr, uint64_t length) const {
    auto m = FindRegion(addr, length);
    if (!m) return std::nullopt;
    return std::move(m->value);
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return regions_.size();
  }

 private:
  struct Entry {
    uint64_t length;
    Value value;
  };
  mutable std::mutex mutex_;
  std::map<uint64_t, Entry> regions_;
};

}  // namespace mooncake::transport
