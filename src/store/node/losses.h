// What became of the acknowledged objects when the store service ends (docs/STORE.md "When
// DRAM and the SSD fill"): the master's loss counters for summary.json and the result line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "store/master.h"

namespace mooncake::store {

// Acknowledged objects that went away without a Remove, by cause. Fills `extra`; returns the
// total.
uint64_t CountLosses(const MasterStats& m, std::map<std::string, double>* extra);

// The result line. Under store.when_full = evict (`keep` false) the store is a cache and its
// LRU drops are its policy (counted, still OK); any other loss of an acknowledged object is not
// OK ("LOST ..."). `errors`: over every rank; `dead`: ranks declared dead.
std::string ResultLine(uint64_t errors, size_t dead, const MasterStats& m, bool keep);

}  // namespace mooncake::store
