#include "p2p/tracker_client.h"

#include "common/wire_fields.h"

namespace mooncake::p2p {
namespace {

class LocalTrackerClient final : public TrackerClient {
 public:
  LocalTrackerClient(Tracker& tracker, Rank self) : tracker_(tracker), self_(self.value) {}
  Status Register(const RegisterRequest& r) override { return tracker_.Register(self_, r); }
  Result<Manifest> Lookup(const std::string& name) override { return tracker_.Lookup(self_, name); }
  Status Join(const JoinRequest& r) override { return tracker_.Join(self_, r); }
  Result<UpdateResponse> Update(const UpdateRequest& r) override {
    return tracker_.Update(self_, r);
  }
  Status Unregister(const std::string& name) override { return tracker_.Unregister(self_, name); }
  Result<ListResponse> List() override { return tracker_.List(); }
  Status Done(const RankReport& r) override { return tracker_.ReportDone(self_, r); }
  Result<HeartbeatResponse> Heartbeat() override { return tracker_.Heartbeat(self_); }
  Status Leave() override { return tracker_.Leave(self_); }

 private:
  Tracker& tracker_;
  int32_t self_;
};

class RemoteTrackerClient final : public TrackerClient {
 public:
  RemoteTrackerClient(transport::Rpc& rpc, Rank tracker, Nanos timeout)
      : rpc_(rpc), tracker_(tracker), timeout_(timeout) {}

  Status Register(const RegisterRequest& r) override { return Send(P2pMsg::kRegister, r); }
  Result<Manifest> Lookup(const std::string& name) override {
    return Ask<Manifest>(P2pMsg::kLookup, NameRequest{name});
  }
  Status Join(const JoinRequest& r) override { return Send(P2pMsg::kJoin, r); }
  Result<UpdateResponse> Update(const UpdateRequest& r) override {
    return Ask<UpdateResponse>(P2pMsg::kUpdate, r);
  }
  Status Unregister(const std::string& name) override {
    return Send(P2pMsg::kUnregister, NameRequest{name});
  }
  Result<ListResponse> List() override { return Ask<ListResponse>(P2pMsg::kList, Empty{}); }
  Status Done(const RankReport& r) override { return Send(P2pMsg::kDone, r); }
  Result<HeartbeatResponse> Heartbeat() override {
    return Ask<HeartbeatResponse>(P2pMsg::kHeartbeat, Empty{});
  }
  Status Leave() override { return Send(P2pMsg::kLeave, Empty{}); }

 private:
  template <typename Response, typename Request>
  Result<Response> Ask(P2pMsg type, const Request& request) {
    auto reply = rpc_.Call<Request, Response>(tracker_, type, request, timeout_);
    if (!reply.ok()) return reply.status().WithContext("p2p tracker (rank 0)");
    return reply;
  }
  template <typename Request>
  Status Send(P2pMsg type, const Request& request) {
    auto reply = Ask<Empty>(type, request);
    return reply.ok() ? Status::Ok() : reply.status();
  }

  transport::Rpc& rpc_;
  Rank tracker_;
  Nanos timeout_;
};

// Inline: the tracker's calls take its lock for in-memory work only.
template <typename Request, typename Response, typename Serve>
void On(transport::Rpc& rpc, P2pMsg type, Serve serve) {
  transport::CheckRegistered(rpc.RegisterInline<Request, Response>(type, std::move(serve)));
}

}  // namespace

std::unique_ptr<TrackerClient> MakeLocalTrackerClient(Tracker& tracker, Rank self) {
  return std::make_unique<LocalTrackerClient>(tracker, self);
}

std::unique_ptr<TrackerClient> MakeRemoteTrackerClient(transport::Rpc& rpc, Rank tracker_rank,
                                                       Nanos timeout) {
  return std::make_unique<RemoteTrackerClient>(rpc, tracker_rank, timeout);
}

void ServeTracker(Tracker& t, transport::Rpc& rpc) {
  On<RegisterRequest, Empty>(rpc, P2pMsg::kRegister, [&t](Rank from, const RegisterRequest& q) {
    return t.Register(from.value, q);
  });
  On<NameRequest, Manifest>(rpc, P2pMsg::kLookup, [&t](Rank from, const NameRequest& q) {
    return t.Lookup(from.value, q.name);
  });
  On<JoinRequest, Empty>(rpc, P2pMsg::kJoin,
                         [&t](Rank from, const JoinRequest& q) { return t.Join(from.value, q); });
  On<UpdateRequest, UpdateResponse>(rpc, P2pMsg::kUpdate, [&t](Rank from, const UpdateRequest& q) {
    return t.Update(from.value, q);
  });
  On<NameRequest, Empty>(rpc, P2pMsg::kUnregister, [&t](Rank from, const NameRequest& q) {
    return t.Unregister(from.value, q.name);
  });
  On<Empty, ListResponse>(rpc, P2pMsg::kList, [&t](Rank, const Empty&) { return t.List(); });
  On<RankReport, Empty>(rpc, P2pMsg::kDone, [&t](Rank from, const RankReport& q) {
    return t.ReportDone(from.value, q);
  });
  On<Empty, HeartbeatResponse>(rpc, P2pMsg::kHeartbeat,
                               [&t](Rank from, const Empty&) { return t.Heartbeat(from.value); });
  On<Empty, Empty>(rpc, P2pMsg::kLeave,
                   [&t](Rank from, const Empty&) { return t.Leave(from.value); });
}

}  // namespace mooncake::p2p
