#include "client/client.h"

#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>

#include "client/attach_addresses.h"
#include "client/client_impl.h"
#include "client/connection_file.h"
#include "common/log.h"
#include "common/units.h"
#include "store/net/client.h"
#include "store/net/directory.h"
#include "store/net/messages.h"
#include "transport/attach_numbers.h"
#include "transport/factory/transport_factory.h"
#include "transport/rpc.h"

namespace mooncake::client {

Status Client::Impl::Enter() {
  std::lock_guard<std::mutex> lock(calls_mutex_);
  if (closed_) return InvalidArgument("the client is closed");
  ++calls_in_flight_;
  return Status::Ok();
}

void Client::Impl::Leave() {
  std::lock_guard<std::mutex> lock(calls_mutex_);
  if (--calls_in_flight_ == 0) calls_done_.notify_all();
}

Status Client::Impl::AttachTo(Rank rank, const std::vector<std::string>& addresses,
                              const std::vector<std::byte>& credential, bool* nothing_listens) {
  return AttachAtAnyAddress(*transport, rank, addresses, credential, options.connect_timeout,
                            nothing_listens);
}

Status Client::Impl::Open(const ConnectionInfo& connection, const std::string& connection_file,
                          const ClientOptions& opts) {
  options = opts;
  transport::TransportConfig tc;
  tc.ucx.tls = opts.transport_tls;
  auto t = transport::CreateTransport(tc, Rank{-1}, connection.world_size);
  if (!t.ok()) return t.status();
  transport = std::move(*t);
  rpc = std::make_unique<transport::Rpc>(*transport);
  rpc->SetJobToken(connection.token);
  const std::vector<std::byte> credential = TokenBytes(connection.token);
  // A directory call to a live conductor takes milliseconds; a stopped one costs this much of
  // each round, so it is kept short where there is another conductor to try (the rounds go on
  // for failover_timeout). With one conductor there is one try: it gets the call's timeout (a
  // master slow on a loaded machine must not fail the attach).
  const bool standby_listed = connection.conductors.size() > 1;
  FollowerConfig fc{
      opts.connect_timeout,
      standby_listed ? std::min<Nanos>(opts.timeout, std::chrono::seconds(1)) : opts.timeout,
      std::chrono::milliseconds(100)};
  follower_ = std::make_unique<MasterFollower>(*transport, *rpc, fc, connection_file, connection);
  // With a standby listed, a takeover may be under way: look as long as a follow would. With one
  // conductor, one try.
  SteadyClock clock;
  const Nanos look = standby_listed ? opts.failover_timeout : Nanos(0);
  auto found = follower_->Find(Rank{-1}, clock.Now() + look, [] { return false; });
  if (!found.ok() && follower_->nothing_listens()) {
    return PeerFailure(
        "no store job listens at the connection file's addresses (it has "
        "stopped, or the file is stale): " +
        found.status().message());
  }
  if (!found.ok()) return found.status().WithContext("attaching to the store's master");
  const Rank master = found->master;
  const store::StoreDirectory& directory = found->directory;
  for (const auto& entry : directory.store_ranks) {
    std::vector<std::string> addresses;
    for (const auto& h : entry.hosts) addresses.push_back(h + ":" + std::to_string(entry.port));
    MC_RETURN_IF_ERROR(
        AttachTo(entry.rank, addresses, credential)
            .WithContext("attaching to store rank " + std::to_string(entry.rank.value)));
    auto d = transport::RemoteDescriptor::Decode(entry.segment);
    if (!d.ok()) return d.status();
    MC_RETURN_IF_ERROR(transport->Import(entry.rank, *d));
    info.store_ranks.push_back(entry.rank.value);
  }
  auto topology = directory.Topology();
  if (!topology.ok()) return topology.status();
  store::StoreClientConfig sc;
  sc.timeout = options.timeout;
  sc.verify_checksum = options.verify_checksum;
  sc.copy_threads = std::max(1, options.copy_threads);
  store = std::make_unique<store::StoreClient>(*transport, *rpc, master, std::move(*topology), sc);
  // A joined store rank is looked up at the master of the moment.
  store->SetRankResolver(
      [this, credential](Rank r) { return AttachJoined(r, store->master(), credential); });
  info.world_size = directory.world_size;
  info.master_rank = master.value;
  info.default_replicas = directory.default_replicas;
  info.ssd = directory.ssd;
  info.attached_as = AttachedAs(master);
  return Status::Ok();
}

Result<store::StoreSegment> Client::Impl::AttachJoined(Rank rank, Rank master,
                                                       const std::vector<std::byte>& credential) {
  auto directory = rpc->Call<EmptyMessage, store::StoreDirectory>(
      master, store::StoreMsg::kDirectory, {}, options.timeout);
  if (!directory.ok()) {
    return directory.status().WithContext("asking the master for a joined store rank");
  }
  for (const auto& entry : directory->store_ranks) {
    if (entry.rank != rank) continue;
    std::vector<std::string> addresses;
    for (const auto& h : entry.hosts) addresses.push_back(h + ":" + std::to_string(entry.port));
    MC_RETURN_IF_ERROR(
        AttachTo(entry.rank, addresses, credential)
            .WithContext("attaching to joined store rank " + std::to_string(rank.value)));
    auto d = transport::RemoteDescriptor::Decode(entry.segment);
    if (!d.ok()) return d.status();
    MC_RETURN_IF_ERROR(transport->Import(entry.rank, *d));
    return store::StoreSegment{entry.rank, d->addr, d->length};
  }
  return NotFound("the master's directory lists no store rank " + std::to_string(rank.value));
}

Status Client::Impl::Close() {
  {
    std::unique_lock<std::mutex> lock(calls_mutex_);
    closed_ = true;
    // A call in flight ends within about two of its deadlines (store/net/client.h: a transfer
    // that timed out gets one more to stop using the caller's buffer) and a search for a new
    // master (which stops between its tries once closed_ is set); a batch stops between its
    // parts once closed_ is set.
    const Nanos wait = 2 * options.timeout + options.failover_timeout + std::chrono::seconds(5);
    if (!calls_done_.wait_for(lock, wait, [&] { return calls_in_flight_ == 0; })) {
      return Status(ErrorCode::kBusy, std::to_string(calls_in_flight_) +
                                          " call(s) still in flight " + FormatDuration(wait) +
                                          " after close() began: nothing was freed; close again");
    }
    if (freed_) return Status::Ok();
    freed_ = true;
  }
  Status result;
  store.reset();
  if (rpc) rpc->Stop();  // no handler runs from here on
  if (transport) {
    {
      std::lock_guard<std::mutex> lock(regions_mutex);
      regions.clear();  // the transport unregisters everything it holds when it closes
    }
    transport->BeginShutdown();
    result = transport->Close(std::chrono::seconds(2));
  }
  rpc.reset();  // before the transport it is the message handler of
  transport.reset();
  return result;
}

store::ReplicateConfig Client::Impl::Replication(const PutOptions& o) const {
  store::ReplicateConfig c;
  c.replicas = o.replicas > 0 ? o.replicas : info.default_replicas;
  c.soft_pin = o.soft_pin;
  c.hard_pin = o.hard_pin;
  for (int r : o.preferred_ranks) c.preferred_ranks.push_back(Rank{r});
  return c;
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() {
  Status s = impl_->Close();
  if (!s.ok() && s.code() == ErrorCode::kBusy) {
    // Freeing under a call in flight would crash it: the client is left allocated instead.
    log::Error("mooncake client destroyed while in use: {}; its memory is not freed", s.message());
    (void)impl_.release();
  }
}

namespace {

Result<std::unique_ptr<Client::Impl>> OpenImpl(const ConnectionInfo& connection,
                                               const std::string& connection_file,
                                               const ClientOptions& options) {
  auto impl = std::make_unique<Client::Impl>();
  Status s = impl->Open(connection, connection_file, options);
  if (!s.ok()) return s;
  return impl;
}

}  // namespace

Result<std::unique_ptr<Client>> Client::Connect(const std::string& connection_file,
                                                const ClientOptions& options) {
  auto connection = ReadConnectionFile(connection_file);
  if (!connection.ok()) return connection.status();
  auto impl = OpenImpl(*connection, connection_file, options);
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<Client>(new Client(std::move(*impl)));
}

Result<std::unique_ptr<Client>> Client::ConnectTo(const std::string& address,
                                                  const std::string& token,
                                                  const ClientOptions& options) {
  ConnectionInfo connection;
  auto parsed = ParseToken(token);
  if (!parsed.ok()) return parsed.status();
  connection.token = *parsed;
  connection.master_addresses = {address};
  std::string host;
  uint16_t port = 0;
  MC_RETURN_IF_ERROR(SplitHostPort(address, "store address", &host, &port));
  // The job's size is not known yet: a first attach learns it (transport.h, Attach).
  transport::TransportConfig tc;
  tc.ucx.tls = options.transport_tls;
  auto probe = transport::CreateTransport(tc, Rank{-1}, 2);
  if (!probe.ok()) return probe.status();
  int job_size = 0;
  Status s = (*probe)->Attach(Rank{0}, host, port, TokenBytes(connection.token),
                              options.connect_timeout, &job_size);
  (void)(*probe)->Close(std::chrono::seconds(2));
  if (job_size < 2) return s.ok() ? ProtocolError("the master did not say its job's size") : s;
  if (job_size > kMaxJobRanks) {
    return ProtocolError("the listener at " + address + " says its job has " +
                         std::to_string(job_size) + " ranks, more than " +
                         std::to_string(kMaxJobRanks));
  }
  if (s.code() == ErrorCode::kPermissionDenied) return s;
  connection.world_size = job_size;
  auto impl = OpenImpl(connection, "", options);
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<Client>(new Client(std::move(*impl)));
}

Status Client::Put(const std::string& key, std::span<const std::byte> value,
                   const PutOptions& options) {
  Impl::Call call(*impl_);
  MC_RETURN_IF_ERROR(call.status());
  std::span<const std::byte> values[] = {value};
  return impl_->PutPart(std::span(&key, 1), values, impl_->Replication(options))[0];
}

Result<std::vector<std::byte>> Client::Get(const std::string& key) {
  Impl::Call call(*impl_);
  MC_RETURN_IF_ERROR(call.status());
  return impl_->Reading([&] { return impl_->store->GetValue(key); });
}

Status Client::PutFrom(const std::string& key, const void* data, size_t size,
                       const PutOptions& options) {
  return Put(key, std::span<const std::byte>(static_cast<const std::byte*>(data), size), options);
}

Result<size_t> Client::GetInto(const std::string& key, void* out, size_t capacity) {
  Impl::Call call(*impl_);
  MC_RETURN_IF_ERROR(call.status());
  return impl_->Reading([&] {
    return impl_->store->Get(key, std::span<std::byte>(static_cast<std::byte*>(out), capacity));
  });
}

std::vector<Status> Client::BatchPut(std::span<const std::string> keys,
                                     std::span<const std::span<const std::byte>> values,
                                     const PutOptions& options) {
  Impl::Call call(*impl_);
  if (Status s = call.status(); !s.ok() || keys.size() != values.size()) {
    return std::vector<Status>(keys.size(),
                               s.ok() ? InvalidArgument("batch put: keys and values differ") : s);
  }
  std::vector<Status> out;
  out.reserve(keys.size());
  const store::ReplicateConfig config = impl_->Replication(options);
  impl_->InParts(
      keys.size(),
      [&](size_t first, size_t n) {
        auto part = impl_->PutPart(keys.subspan(first, n), values.subspan(first, n), config);
        out.insert(out.end(), part.begin(), part.end());
      },
      [&](size_t, size_t n) { out.insert(out.end(), n, Impl::ClosedDuringCall()); });
  return out;
}

std::vector<Result<std::vector<std::byte>>> Client::BatchGet(std::span<const std::string> keys) {
  std::vector<Result<std::vector<std::byte>>> out;
  Impl::Call call(*impl_);
  if (!call.status().ok()) return {keys.size(), call.status()};
  out.reserve(keys.size());
  impl_->InParts(
      keys.size(),
      [&](size_t first, size_t n) {
        auto part =
            impl_->Reading([&] { return impl_->store->BatchGetValues(keys.subspan(first, n)); });
        for (auto& r : part) out.push_back(std::move(r));
      },
      [&](size_t, size_t n) {
        for (size_t i = 0; i < n; ++i) out.push_back(Impl::ClosedDuringCall());
      });
  return out;
}

std::vector<Result<size_t>> Client::BatchGetInto(std::span<const std::string> keys,
                                                 std::span<const std::span<std::byte>> outs) {
  Impl::Call call(*impl_);
  if (Status s = call.status(); !s.ok() || keys.size() != outs.size()) {
    return {keys.size(), s.ok() ? InvalidArgument("batch get: keys and buffers differ") : s};
  }
  std::vector<Result<size_t>> out;
  out.reserve(keys.size());
  impl_->InParts(
      keys.size(),
      [&](size_t first, size_t n) {
        auto part = impl_->Reading(
            [&] { return impl_->store->BatchGet(keys.subspan(first, n), outs.subspan(first, n)); });
        for (auto& r : part) out.push_back(std::move(r));
      },
      [&](size_t, size_t n) {
        for (size_t i = 0; i < n; ++i) out.push_back(Impl::ClosedDuringCall());
      });
  return out;
}

Status Client::Exists(const std::string& key) {
  Impl::Call call(*impl_);
  MC_RETURN_IF_ERROR(call.status());
  return impl_->Reading([&] { return impl_->store->Exists(key); });
}

Result<std::vector<uint8_t>> Client::BatchExists(std::span<const std::string> keys) {
  Impl::Call call(*impl_);
  MC_RETURN_IF_ERROR(call.status());
  std::vector<uint8_t> out;
  out.reserve(keys.size());
  Status failed;
  impl_->InParts(
      keys.size(),
      [&](size_t first, size_t n) {
        if (!failed.ok()) return;
        auto part =
            impl_->Reading([&] { return impl_->store->BatchExists(keys.subspan(first, n)); });
        if (!part.ok()) {
          failed = part.status();
          return;
        }
        out.insert(out.end(), part->begin(), part->end());
      },
      [&](size_t, size_t) { failed = Impl::ClosedDuringCall(); });
  if (!failed.ok()) return failed;
  return out;
}

Status Client::Remove(const std::string& key) {
  Impl::Call call(*impl_);
  MC_RETURN_IF_ERROR(call.status());
  return impl_->RemovePart(std::span(&key, 1))[0];
}

std::vector<Status> Client::BatchRemove(std::span<const std::string> keys) {
  Impl::Call call(*impl_);
  if (!call.status().ok()) return std::vector<Status>(keys.size(), call.status());
  std::vector<Status> out;
  out.reserve(keys.size());
  impl_->InParts(
      keys.size(),
      [&](size_t first, size_t n) {
        auto part = impl_->RemovePart(keys.subspan(first, n));
        out.insert(out.end(), part.begin(), part.end());
      },
      [&](size_t, size_t n) { out.insert(out.end(), n, Impl::ClosedDuringCall()); });
  return out;
}

Result<uint64_t> Client::GetSize(const std::string& key) {
  Impl::Call call(*impl_);
  MC_RETURN_IF_ERROR(call.status());
  return impl_->Reading([&] { return impl_->store->GetSize(key); });
}

namespace {

std::string RangeName(const void* addr, size_t size) {
  return fmt::format("[{}, +{} B)", addr, size);
}

// OK when every page of [addr, +size) is mapped in this process. msync answers ENOMEM for an
// unmapped page without touching (or faulting in) any of them.
Status CheckMapped(const void* addr, size_t size) {
  if (addr == nullptr || size == 0) {
    return InvalidArgument("buffer " + RangeName(addr, size) + ": null or empty");
  }
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(addr) + size;
  if (end < reinterpret_cast<uintptr_t>(addr)) {
    return InvalidArgument("buffer " + RangeName(addr, size) + " wraps around the address space");
  }
  if (msync(reinterpret_cast<void*>(begin), end - begin, MS_ASYNC) != 0) {
    return InvalidArgument("buffer " + RangeName(addr, size) +
                           " is not mapped memory of this process (" + std::strerror(errno) + ")");
  }
  return Status::Ok();
}

}  // namespace

Status Client::CheckRegistered(const void* addr, size_t size) {
  Impl::Call call(*impl_);
  MC_RETURN_IF_ERROR(call.status());
  std::lock_guard<std::mutex> lock(impl_->regions_mutex);
  auto it = impl_->regions.upper_bound(const_cast<void*>(addr));
  if (it != impl_->regions.begin()) {
    --it;
    const auto base = reinterpret_cast<uintptr_t>(it->second.addr);
    const auto first = reinterpret_cast<uintptr_t>(addr);
    if (first >= base && size <= it->second.length && first - base <= it->second.length - size) {
      return Status::Ok();
    }
  }
  return InvalidArgument("address range " + RangeName(addr, size) +
                         " is not inside a registered buffer (register_buffer it first)");
}

Status Client::RegisterBuffer(void* addr, size_t size) {
  Impl::Call call(*impl_);
  MC_RETURN_IF_ERROR(call.status());
  MC_RETURN_IF_ERROR(CheckMapped(addr, size));
  std::lock_guard<std::mutex> lock(impl_->regions_mutex);
  if (impl_->regions.count(addr)) {
    return Status(ErrorCode::kAlreadyExists, "a buffer is registered at that address already");
  }
  auto region = impl_->transport->RegisterMemory(addr, size, transport::MemoryType::kHost);
  if (!region.ok()) return region.status();
  impl_->regions[addr] = *region;
  return Status::Ok();
}

Status Client::UnregisterBuffer(void* addr) {
  Impl::Call call(*impl_);
  MC_RETURN_IF_ERROR(call.status());
  std::lock_guard<std::mutex> lock(impl_->regions_mutex);
  auto it = impl_->regions.find(addr);
  if (it == impl_->regions.end()) return NotFound("no buffer registered at that address");
  Status s = impl_->transport->UnregisterMemory(it->second);
  impl_->regions.erase(it);
  return s;
}

StoreInfo Client::info() const { return impl_->info_now(); }

Status Client::Close() { return impl_->Close(); }

}  // namespace mooncake::client
