#include "store/standby_table.h"

namespace mooncake::store {

StandbyTable::StandbyTable(const std::vector<std::pair<Rank, uint64_t>>& segments) {
  for (const auto& [rank, length] : segments) segments_[rank] = length;
}

Status StandbyTable::Apply(const JournalBatch& batch) {
  if (batch.first_seq > next_seq_) {
    return OutOfRange("journal entry " + std::to_string(next_seq_) +
                      " is missing (the batch starts at " + std::to_string(batch.first_seq) + ")");
  }
  for (size_t i = 0; i < batch.entries.size(); ++i) {
    if (batch.first_seq + i < next_seq_) continue;  // applied before
    ApplyOne(batch.entries[i]);
    ++next_seq_;
  }
  return Status::Ok();
}

void StandbyTable::ApplyOne(const JournalEntry& e) {
  switch (e.op) {
    case JournalOp::kUpsert:
      objects_[e.object.key] = e.object;
      return;
    case JournalOp::kErase:
      objects_.erase(e.object.key);
      return;
    case JournalOp::kAddSegment:
      segments_[e.rank] = e.length;
      return;
    case JournalOp::kRemoveSegment:
      segments_.erase(e.rank);
      return;
    case JournalOp::kReset:
      objects_.clear();
      return;
  }
}

Status StandbyTable::RestoreInto(MetadataMaster& master) const {
  for (const auto& [rank, length] : segments_) MC_RETURN_IF_ERROR(master.AddSegment(rank, length));
  std::vector<ObjectRecord> records;
  records.reserve(objects_.size());
  for (const auto& [key, record] : objects_) records.push_back(record);
  return master.Restore(std::move(records));
}

std::vector<std::string> StandbyTable::keys() const {
  std::vector<std::string> out;
  out.reserve(objects_.size());
  for (const auto& [key, record] : objects_) out.push_back(key);
  return out;
}

}  // namespace mooncake::store
