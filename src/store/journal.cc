#include "store/journal.h"

namespace mooncake::store {

Status JournalBatch::Validate() const {
  auto bad = [](const std::string& why) { return ProtocolError("malformed JournalBatch: " + why); };
  if (entries.size() > kMaxJournalEntries) return bad("too many entries");
  if (first_seq == 0) return bad("entries are numbered from 1");
  for (const JournalEntry& e : entries) {
    if (e.op > JournalOp::kReset) return bad("unknown op " + std::to_string(int(e.op)));
    if (e.object.key.size() > kMaxKeyBytes) return bad("key too long");
    if (e.object.replicas.size() > 64) return bad("too many replicas");
    for (const ReplicaLocation& r : e.object.replicas) {
      if (r.tier > Tier::kSsd) return bad("unknown tier");
    }
  }
  return Status::Ok();
}

}  // namespace mooncake::store
