#include "p2p/tracker.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/log.h"

namespace mooncake::p2p {

namespace {

cluster::Membership EveryRank(int world_size, int32_t tracker_rank) {
  std::vector<cluster::Member> others;
  for (int32_t r = 0; r < world_size; ++r) others.push_back({Rank{r}, cluster::Role::kStore});
  return cluster::Membership(Rank{tracker_rank}, others);
}

}  // namespace

Tracker::Tracker(TrackerConfig config, const Clock& clock)
    : config_(config),
      clock_(clock),
      ranks_(std::max(1, config.world_size)),
      members_(EveryRank(std::max(1, config.world_size), config.tracker_rank)) {
  for (auto& r : ranks_) r.last_seen = clock_.Now();
}

void Tracker::RestartLiveness() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& r : ranks_) r.last_seen = clock_.Now();
}

void Tracker::ExpireSilentRanks() {
  const Nanos now = clock_.Now();
  for (int32_t r = 0; r < static_cast<int32_t>(ranks_.size()); ++r) {
    RankState& s = ranks_[r];
    if (s.left || now - s.last_seen <= config_.peer_timeout) continue;
    const double silent = std::chrono::duration<double>(now - s.last_seen).count();
    if (!members_.Die(Rank{r}, now, fmt::format("no heartbeat for {:.1f} s", silent))) continue;
    log::Warn("p2p tracker: rank {} declared dead (no heartbeat for {:.1f} s)", r, silent);
    for (auto& [name, object] : objects_) RemoveHolder(object, r);
  }
}

Status Tracker::Touch(int32_t rank) {
  if (rank < 0 || rank >= static_cast<int32_t>(ranks_.size())) {
    return InvalidArgument(fmt::format("rank {} is not a rank of this job", rank));
  }
  ExpireSilentRanks();
  RankState& s = ranks_[rank];
  if (members_.IsDead(Rank{rank})) {
    return PeerFailure(fmt::format("the tracker fenced rank {}: it was declared dead", rank));
  }
  s.last_seen = clock_.Now();
  return Status::Ok();
}

void Tracker::RemoveHolder(Object& object, int32_t rank) {
  auto it = object.holders.find(rank);
  if (it == object.holders.end() || it->second.gone) return;
  it->second.gone = true;
  object.events.push_back({EventKind::kLeft, rank, 0});
}

Status Tracker::Register(int32_t rank, const RegisterRequest& request) {
  std::lock_guard<std::mutex> lock(mutex_);
  MC_RETURN_IF_ERROR(Touch(rank));
  const std::string& name = request.manifest.name;
  auto [it, created] = objects_.try_emplace(name);
  Object& object = it->second;
  if (created) {
    object.manifest = request.manifest;
    object.layout = PieceLayout(object.manifest.entries, object.manifest.piece_size);
  } else if (!(object.manifest == request.manifest)) {
    return InvalidArgument(fmt::format(
        "rank {} registers '{}' with other contents than the holders before it (different "
        "files, sizes or bytes)",
        rank, name));
  }
  if (object.holders.count(rank) && !object.holders[rank].gone) {
    return InvalidArgument(fmt::format("rank {} holds '{}' already", rank, name));
  }
  if (first_register_.count() == 0) first_register_ = clock_.Now();
  Holder holder{request.copy, PieceSet(object.layout.count()), 0, false};
  holder.copy.rank = rank;
  holder.copy.complete = true;
  holder.have.InsertAll();
  object.holders[rank] = std::move(holder);
  object.events.push_back({EventKind::kJoined, rank, 0});
  return Status::Ok();
}

Result<std::map<std::string, Tracker::Object>::iterator> Tracker::TouchObject(
    int32_t rank, const std::string& name) {
  MC_RETURN_IF_ERROR(Touch(rank));
  auto it = objects_.find(name);
  if (it == objects_.end()) return NotFound(fmt::format("no object '{}' is registered", name));
  return it;
}

Result<Manifest> Tracker::Lookup(int32_t rank, const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = TouchObject(rank, name);
  if (!it.ok()) return it.status();
  return (*it)->second.manifest;
}

Status Tracker::Join(int32_t rank, const JoinRequest& request) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = TouchObject(rank, request.name);
  if (!it.ok()) return it.status();
  Object& object = (*it)->second;
  if (request.copy.entry_addrs.size() != object.manifest.entries.size()) {
    return InvalidArgument(fmt::format("rank {} joins '{}' with {} entry addresses for {} entries",
                                       rank, request.name, request.copy.entry_addrs.size(),
                                       object.manifest.entries.size()));
  }
  if (object.holders.count(rank) && !object.holders[rank].gone) {
    return InvalidArgument(fmt::format("rank {} holds '{}' already", rank, request.name));
  }
  Holder holder{request.copy, PieceSet(object.layout.count()), 0, false};
  holder.copy.rank = rank;
  holder.copy.complete = false;
  object.holders[rank] = std::move(holder);
  object.events.push_back({EventKind::kJoined, rank, 0});
  return Status::Ok();
}

void Tracker::ApplyBad(Object& object, const BadPiece& bad) {
  auto it = object.holders.find(bad.holder);
  if (it == object.holders.end() || it->second.gone) return;
  Holder& h = it->second;
  if (!h.have.Erase(bad.piece)) return;
  object.events.push_back({EventKind::kDropped, bad.holder, bad.piece});
  if (++h.bad >= config_.max_bad_pieces) {
    log::Warn("p2p tracker: rank {} served {} damaged pieces of '{}': no longer used", bad.holder,
              h.bad, object.manifest.name);
    RemoveHolder(object, bad.holder);
  }
}

Result<UpdateResponse> Tracker::Update(int32_t rank, const UpdateRequest& request) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = TouchObject(rank, request.name);
  if (!it.ok()) return it.status();
  Object& object = (*it)->second;
  const size_t pieces = object.layout.count();
  auto self = object.holders.find(rank);
  if ((!request.landed.empty() || !request.started.empty()) &&
      (self == object.holders.end() || self->second.gone)) {
    return InvalidArgument(
        fmt::format("rank {} reports pieces of '{}' without holding it", rank, request.name));
  }
  if (request.since > object.events.size()) {
    return InvalidArgument(
        fmt::format("update since event {} of {}", request.since, object.events.size()));
  }
  for (uint32_t p : request.landed) {
    if (p >= pieces) return InvalidArgument(fmt::format("piece {} of {}", p, pieces));
    if (self->second.have.Insert(p)) object.events.push_back({EventKind::kLanded, rank, p});
  }
  for (uint32_t p : request.started) {
    if (p >= pieces) return InvalidArgument(fmt::format("piece {} of {}", p, pieces));
    object.events.push_back({EventKind::kStarted, rank, p});
  }
  for (const BadPiece& b : request.bad) {
    if (b.piece >= pieces) return InvalidArgument(fmt::format("piece {} of {}", b.piece, pieces));
    ApplyBad(object, b);
  }
  for (int32_t f : request.failed) {
    log::Info("p2p tracker: rank {} could not read from rank {}", rank, f);
  }
  UpdateResponse out;
  const size_t end = std::min<size_t>(object.events.size(), request.since + kMaxEventsPerUpdate);
  out.events.assign(object.events.begin() + request.since, object.events.begin() + end);
  out.next = end;
  for (const Event& e : out.events) {
    if (e.kind == EventKind::kJoined) out.holders.push_back(object.holders[e.rank].copy);
  }
  return out;
}

Status Tracker::Unregister(int32_t rank, const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = TouchObject(rank, name);
  if (!found.ok()) return found.status();
  auto it = *found;
  auto h = it->second.holders.find(rank);
  if (h == it->second.holders.end() || h->second.gone) {
    return NotFound(fmt::format("rank {} does not hold '{}'", rank, name));
  }
  RemoveHolder(it->second, rank);
  const bool any = std::any_of(it->second.holders.begin(), it->second.holders.end(),
                               [](const auto& kv) { return !kv.second.gone; });
  if (!any) objects_.erase(it);
  return Status::Ok();
}

ListResponse Tracker::List() {
  std::lock_guard<std::mutex> lock(mutex_);
  ExpireSilentRanks();
  ListResponse out;
  for (const auto& [name, object] : objects_) {
    ObjectSummary s{name, object.layout.total_bytes(), static_cast<uint32_t>(object.layout.count()),
                    0, 0};
    for (const auto& [rank, h] : object.holders) {
      if (h.gone || h.have.empty()) continue;
      ++s.holders;
      if (h.have.full()) ++s.complete_holders;
    }
    out.objects.push_back(std::move(s));
  }
  return out;
}

Status Tracker::ReportDone(int32_t rank, const RankReport& report) {
  std::lock_guard<std::mutex> lock(mutex_);
  MC_RETURN_IF_ERROR(Touch(rank));
  RankReport r = report;
  r.rank = rank;
  if (r.role != RankRole::kSource) last_receiver_done_ = clock_.Now();
  reports_[rank] = std::move(r);
  ranks_[rank].reported = true;
  return Status::Ok();
}

bool Tracker::FinishedLocked() const {
  for (int32_t r = 0; r < static_cast<int32_t>(ranks_.size()); ++r) {
    if (!ranks_[r].reported && !members_.IsDead(Rank{r})) return false;
  }
  return true;
}

Result<HeartbeatResponse> Tracker::Heartbeat(int32_t rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  MC_RETURN_IF_ERROR(Touch(rank));
  HeartbeatResponse out;
  out.finished = FinishedLocked();
  for (int32_t r = 0; r < static_cast<int32_t>(ranks_.size()); ++r) {
    if (ranks_[r].reported) out.done.push_back(r);
    if (ranks_[r].reported && !reports_[r].ok) out.failed.push_back(r);
    if (members_.IsDead(Rank{r})) out.dead.push_back(r);
  }
  return out;
}

Status Tracker::Leave(int32_t rank) {
  std::lock_guard<std::mutex> lock(mutex_);
  MC_RETURN_IF_ERROR(Touch(rank));
  ranks_[rank].left = true;
  return Status::Ok();
}

bool Tracker::Finished() {
  std::lock_guard<std::mutex> lock(mutex_);
  ExpireSilentRanks();
  return FinishedLocked();
}

bool Tracker::AllLeft() {
  std::lock_guard<std::mutex> lock(mutex_);
  ExpireSilentRanks();
  for (int32_t r = 0; r < static_cast<int32_t>(ranks_.size()); ++r) {
    if (!ranks_[r].left && !members_.IsDead(Rank{r})) return false;
  }
  return true;
}

std::vector<RankReport> Tracker::Reports() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<RankReport> out;
  for (const auto& [rank, r] : reports_) out.push_back(r);
  return out;
}

std::vector<std::pair<int32_t, std::string>> Tracker::DeadRanks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<int32_t, std::string>> out;
  for (const cluster::DeadRank& d : members_.dead()) out.emplace_back(d.rank.value, d.why);
  return out;
}

Tracker::Landing Tracker::LandingOf(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  Landing landing;
  if (first_register_.count() != 0) landing.elapsed = clock_.Now() - first_register_;
  auto it = objects_.find(name);
  if (it == objects_.end()) return landing;
  const uint64_t size = it->second.layout.total_bytes();
  for (const auto& [rank, h] : it->second.holders) {
    if (h.copy.complete) continue;
    landing.expected += size;
    for (size_t p = 0; p < it->second.layout.count(); ++p) {
      if (h.have.Test(p)) landing.landed += it->second.layout[p].length;
    }
  }
  return landing;
}

Nanos Tracker::DistributionTime() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (first_register_.count() == 0 || last_receiver_done_ < first_register_) return Nanos(0);
  return last_receiver_done_ - first_register_;
}

}  // namespace mooncake::p2p
