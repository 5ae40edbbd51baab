// Client::Impl's half that moves a client to the conductor that took over (docs/CLIENT.md,
// "When the master changes"): the follow itself, and what puts and removes in flight are told.
#include "client/client_impl.h"

#include "common/log.h"

namespace mooncake::client {

Result<bool> Client::Impl::Follow(uint64_t seen) {
  std::lock_guard<std::mutex> lock(follow_mutex_);
  if (generation() != seen) return true;  // another call moved the client meanwhile
  if (options.failover_timeout <= Nanos(0)) return false;
  const Rank failed = store->master();
  if (!follower_->OtherThan(failed)) return false;
  SteadyClock clock;
  auto found =
      follower_->Find(failed, clock.Now() + options.failover_timeout, [this] { return closing(); });
  if (!found.ok()) return found.status();
  if (found->master == failed) return false;
  store->SetMaster(found->master);
  {
    std::lock_guard<std::mutex> info_lock(info_mutex_);
    info.master_rank = found->master.value;
    info.attached_as = AttachedAs(found->master);
    ++info.master_changes;
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
  log::Warn("store client: the master moved from rank {} to rank {} (connection file epoch {})",
            failed.value, found->master.value, follower_->epoch());
  return true;
}

namespace {

// What a call in flight is told when the master changed under it and it was not run again.
Status ChangedUnder(Rank before, Rank now, const std::string& what) {
  return PeerFailure("the store's master changed (rank " + std::to_string(before.value) +
                     " -> rank " + std::to_string(now.value) + ") while " + what +
                     " was in flight");
}

// A call's failure and the failed search for a new master after it.
Status AndNoNewMaster(const Status& failed, const Status& follow) {
  return Status(failed.code(), failed.message() + "; then " + follow.message());
}

}  // namespace

std::vector<Status> Client::Impl::PutPart(std::span<const std::string> keys,
                                          std::span<const std::span<const std::byte>> values,
                                          const store::ReplicateConfig& config) {
  const uint64_t seen = generation();
  const Rank before = store->master();
  std::vector<store::PutUnanswered> open;
  std::vector<Status> out = store->BatchPut(keys, values, config, nullptr, &open);
  if (std::all_of(open.begin(), open.end(),
                  [](store::PutUnanswered u) { return u == store::PutUnanswered::kNo; })) {
    return out;
  }
  auto moved = Follow(seen);
  std::vector<size_t> again;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (open[i] == store::PutUnanswered::kNo) continue;
    if (!moved.ok()) {
      out[i] = AndNoNewMaster(out[i], moved.status());
    } else if (*moved && open[i] == store::PutUnanswered::kEnd) {
      out[i] = ChangedUnder(before, store->master(), "the put-end of '" + keys[i] + "'")
                   .WithContext(
                       "it may or may not be stored, and was not put again (exists "
                       "tells)");
    } else if (*moved) {
      again.push_back(i);
    }
  }
  if (again.empty()) return out;
  std::vector<std::string> again_keys;
  std::vector<std::span<const std::byte>> again_values;
  for (size_t i : again) {
    again_keys.push_back(keys[i]);
    again_values.push_back(values[i]);
  }
  std::vector<Status> second = store->BatchPut(again_keys, again_values, config);
  for (size_t k = 0; k < again.size(); ++k) out[again[k]] = std::move(second[k]);
  return out;
}

std::vector<Status> Client::Impl::RemovePart(std::span<const std::string> keys) {
  const uint64_t seen = generation();
  const Rank before = store->master();
  const uint64_t unanswered = store::StoreClient::MasterUnansweredOnThisThread();
  std::vector<Status> out = store->BatchRemove(keys);
  if (store::StoreClient::MasterUnansweredOnThisThread() == unanswered) return out;
  auto moved = Follow(seen);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!store::MasterUnanswered(out[i])) continue;
    if (!moved.ok()) {
      out[i] = AndNoNewMaster(out[i], moved.status());
    } else if (*moved) {
      out[i] = ChangedUnder(before, store->master(), "the remove of '" + keys[i] + "'")
                   .WithContext("it may or may not have been removed, and was not removed again");
    }
  }
  return out;
}

}  // namespace mooncake::client
