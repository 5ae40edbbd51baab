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
  template <typename Request>
  Result<std::vector<std::byte>> Call(P2pMsg type, const Request& request) {
    auto reply = rpc_.Call(tracker_, static_cast<uint16_t>(type), WireEncode(request), timeout_);
    if (!reply.ok()) return reply.status().WithContext("p2p tracker (rank 0)");
    return reply;
  }
  template <typename Request>
  Status Send(P2pMsg type, const Request& request) {
    auto reply = Call(type, request);
    return reply.ok() ? Status::Ok() : reply.status();
  }
  template <typename Response, typename Request>
  Result<Response> Ask(P2pMsg type, const Request& request) {
    auto reply = Call(type, request);
    if (!reply.ok()) return reply.status();
    return WireDecode<Response>(*reply, "p2p tracker answer");
  }

  transport::Rpc& rpc_;
  Rank tracker_;
  Nanos timeout_;
};

// Decodes the request, runs `serve` on it, and answers with its encoded result or its error.
template <typename Request, typename Serve>
void Handle(std::span<const std::byte> bytes, transport::Responder responder, Serve&& serve) {
  auto request = WireDecode<Request>(bytes, "p2p request");
  if (!request.ok()) {
    responder.Fail(request.status());
    return;
  }
  auto result = serve(*request);
  if constexpr (std::is_same_v<decltype(result), Status>) {
    if (!result.ok()) return responder.Fail(result);
    responder.Reply({});
  } else {
    if (!result.ok()) return responder.Fail(result.status());
    responder.Reply(WireEncode(*result));
  }
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
  auto on = [&rpc](P2pMsg type, transport::Rpc::Handler handler) {
    rpc.RegisterInline(static_cast<uint16_t>(type), std::move(handler));
  };
  using transport::Responder;
  on(P2pMsg::kRegister, [&t](Rank from, std::span<const std::byte> b, Responder r) {
    Handle<RegisterRequest>(b, r, [&](const auto& q) { return t.Register(from.value, q); });
  });
  on(P2pMsg::kLookup, [&t](Rank from, std::span<const std::byte> b, Responder r) {
    Handle<NameRequest>(b, r, [&](const auto& q) { return t.Lookup(from.value, q.name); });
  });
  on(P2pMsg::kJoin, [&t](Rank from, std::span<const std::byte> b, Responder r) {
    Handle<JoinRequest>(b, r, [&](const auto& q) { return t.Join(from.value, q); });
  });
  on(P2pMsg::kUpdate, [&t](Rank from, std::span<const std::byte> b, Responder r) {
    Handle<UpdateRequest>(b, r, [&](const auto& q) { return t.Update(from.value, q); });
  });
  on(P2pMsg::kUnregister, [&t](Rank from, std::span<const std::byte> b, Responder r) {
    Handle<NameRequest>(b, r, [&](const auto& q) { return t.Unregister(from.value, q.name); });
  });
  on(P2pMsg::kList, [&t](Rank, std::span<const std::byte> b, Responder r) {
    Handle<Empty>(b, r, [&](const auto&) { return Result<ListResponse>(t.List()); });
  });
  on(P2pMsg::kDone, [&t](Rank from, std::span<const std::byte> b, Responder r) {
    Handle<RankReport>(b, r, [&](const auto& q) { return t.ReportDone(from.value, q); });
  });
  on(P2pMsg::kHeartbeat, [&t](Rank from, std::span<const std::byte> b, Responder r) {
    Handle<Empty>(b, r, [&](const auto&) { return t.Heartbeat(from.value); });
  });
  on(P2pMsg::kLeave, [&t](Rank from, std::span<const std::byte> b, Responder r) {
    Handle<Empty>(b, r, [&](const auto&) { return t.Leave(from.value); });
  });
}

}  // namespace mooncake::p2p
