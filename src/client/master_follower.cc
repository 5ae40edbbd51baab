#include "client/master_follower.h"

#include <thread>

#include "client/attach_addresses.h"
#include "common/log.h"
#include "store/net/messages.h"

namespace mooncake::client {

MasterFollower::MasterFollower(transport::Transport& transport, transport::Rpc& rpc,
                               FollowerConfig cfg, std::string connection_file,
                               const ConnectionInfo& initial)
    : transport_(transport),
      rpc_(rpc),
      cfg_(cfg),
      file_(std::move(connection_file)),
      token_(initial.token),
      world_size_(initial.world_size),
      credential_(TokenBytes(initial.token)),
      conductors_(initial.conductors),
      epoch_(initial.epoch) {
  if (conductors_.empty()) {
    conductors_ = {ConductorAddress{initial.master_rank, initial.master_addresses, true}};
  }
}

void MasterFollower::Reread() {
  if (file_.empty()) return;
  auto info = ReadConnectionFile(file_, /*warn_if_readable=*/false);
  if (!info.ok() || !(info->token == token_) || info->world_size != world_size_ ||
      info->epoch < epoch_) {
    return;
  }
  conductors_ = info->conductors;
  epoch_ = info->epoch;
}

bool MasterFollower::OtherThan(Rank failed) {
  Reread();
  for (const ConductorAddress& c : conductors_) {
    if (c.rank != failed.value) return true;
  }
  return false;
}

std::vector<ConductorAddress> MasterFollower::Candidates(Rank failed) const {
  std::vector<ConductorAddress> out;
  for (const ConductorAddress& c : conductors_) {
    if (c.active && c.rank != failed.value) out.push_back(c);
  }
  for (const ConductorAddress& c : conductors_) {
    if (!c.active && c.rank != failed.value) out.push_back(c);
  }
  for (const ConductorAddress& c : conductors_) {
    if (c.rank == failed.value) out.push_back(c);
  }
  return out;
}

Result<store::StoreDirectory> MasterFollower::Ask(const ConductorAddress& c, bool* refused) {
  const Rank rank{c.rank};
  *refused = false;
  if (attached_.count(c.rank) == 0) {
    bool nothing = false;
    Status a = AttachAtAnyAddress(transport_, rank, c.addresses, credential_, cfg_.connect_timeout,
                                  &nothing);
    *refused = nothing;
    if (!a.ok()) return a;
    attached_.insert(c.rank);
  }
  auto reply =
      rpc_.Call(rank, static_cast<uint16_t>(store::StoreMsg::kDirectory), {}, cfg_.ask_timeout);
  if (!reply.ok() && reply.status().code() == ErrorCode::kNotSupported) {
    // No directory handler: a standby that has not taken over (yet).
    return NotSupported("not the master (a standby that has not taken over)");
  }
  if (!reply.ok()) return reply.status();
  auto directory = store::StoreDirectory::Decode(*reply);
  if (!directory.ok()) return directory.status();
  if (directory->world_size != world_size_) {
    return ProtocolError("its directory names a job of " + std::to_string(directory->world_size) +
                         " ranks, the connection file " + std::to_string(world_size_));
  }
  if (directory->master != rank) {
    return NotSupported("it says rank " + std::to_string(directory->master.value) +
                        " is the master");
  }
  return directory;
}

Result<MasterFollower::Found> MasterFollower::Find(Rank failed, Nanos deadline,
                                                   const std::function<bool()>& stop) {
  SteadyClock clock;
  std::string tried;
  Status last = Timeout("no conductor listed");
  int rounds = 0;
  for (;;) {
    Reread();
    nothing_listens_ = true;
    tried.clear();
    for (const ConductorAddress& c : Candidates(failed)) {
      bool refused = false;
      auto directory = Ask(c, &refused);
      if (directory.ok()) return Found{Rank{c.rank}, std::move(*directory)};
      const Status& s = directory.status();
      last = s;
      if (!refused) nothing_listens_ = false;
      if (s.code() == ErrorCode::kPermissionDenied || s.code() == ErrorCode::kInvalidArgument) {
        return s.WithContext("attaching to conductor rank " + std::to_string(c.rank));
      }
      tried +=
          (tried.empty() ? "" : "; ") + ("rank " + std::to_string(c.rank) + ": ") + s.ToString();
      if (stop()) return InvalidArgument("the client was closed while it looked for the master");
    }
    ++rounds;
    if (clock.Now() + cfg_.pause >= deadline) break;
    std::this_thread::sleep_for(cfg_.pause);
    if (stop()) return InvalidArgument("the client was closed while it looked for the master");
  }
  // The last try's code (one conductor tried once: what that attach or call said).
  return Status(last.code() == ErrorCode::kNotSupported ? ErrorCode::kTimeout : last.code(),
                "no conductor of the store answered as its master (" + std::to_string(rounds) +
                    " round(s), connection file epoch " + std::to_string(epoch_) + "): " + tried);
}

}  // namespace mooncake::client
