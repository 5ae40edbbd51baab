// make_fuzz_seeds OUT_DIR CONFIGS_DIR: writes the seed corpora of the fuzz targets (one folder
// per target under OUT_DIR) from real encoded messages: each seed is what the project's own
// encoder writes (selector byte first for the targets that fuzz several message types), the
// INI seeds are the project's config files and the HDF5 seed is the raw index and block
// bytes of a bucket file written by the tier itself. Regenerate after a wire format change
// (tests/fuzz/README.md).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "client/connection_file.h"
#include "cluster/membership.h"
#include "cluster/peer_exchange.h"
#include "common/checksum.h"
#include "common/units.h"
#include "hdf5_template.h"
#include "p2p/manifest.h"
#include "p2p/messages.h"
#include "serve/messages.h"
#include "serve/rank_report.h"
#include "store/hdf5/tier.h"
#include "store/net/directory.h"
#include "store/net/messages.h"
#include "store/net/ssd_messages.h"
#include "trace/trace_reader.h"
#include "transport/rpc.h"

using namespace mooncake;
namespace fs = std::filesystem;

namespace {

fs::path out_root;

void Write(const std::string& target, const std::string& name, std::span<const std::byte> bytes,
           int selector = -1) {
  fs::create_directories(out_root / target);
  std::ofstream out(out_root / target / name, std::ios::binary);
  if (selector >= 0) out.put(static_cast<char>(selector));
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

void WriteText(const std::string& target, const std::string& name, const std::string& text,
               int selector = -1) {
  Write(target, name, std::as_bytes(std::span<const char>(text.data(), text.size())), selector);
}

std::vector<std::string> Keys(int n) {
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i) keys.push_back("req42/block" + std::to_string(i));
  return keys;
}

store::ObjectView View() {
  store::ObjectView v;
  v.size = 4096;
  v.checksum = 0x1234abcd5678ef01ull;
  v.replicas = {{Rank{1}, store::Tier::kDram, 0, 4096}, {Rank{2}, store::Tier::kSsd, 7, 4096}};
  v.lease = Nanos(2'000'000'000);
  return v;
}

void StoreSeeds() {
  const char* t = "fuzz_store_messages";
  store::PutStartRequest put;
  put.config.replicas = 2;
  put.config.preferred_ranks = {Rank{1}};
  put.keys = Keys(3);
  put.sizes = {4096, 4096, 100};
  Write(t, "put_start_request", store::Encode(put), 0);
  store::PutEndRequest end;
  end.keys = Keys(2);
  end.checksums = {1, 2};
  Write(t, "put_end_request", store::Encode(end), 1);
  store::KeysRequest keys;
  keys.keys = Keys(4);
  Write(t, "keys_request", store::Encode(keys), 2);
  store::StatusResponse status;
  status.entries = {store::ToEntry(Status::Ok()), store::ToEntry(NotFound("no such key"))};
  Write(t, "status_response", store::Encode(status), 3);
  store::PutStartResponse start;
  start.entries = {{store::ToEntry(Status::Ok()), View().replicas},
                   {store::ToEntry(NoSpace("store full")), {}}};
  Write(t, "put_start_response", store::Encode(start), 4);
  store::GetResponse get;
  get.entries = {{store::ToEntry(Status::Ok()), View()}, {store::ToEntry(NotFound("gone")), {}}};
  Write(t, "get_response", store::Encode(get), 5);
  store::ExistsResponse exists;
  exists.exists = {1, 0, 1};
  Write(t, "exists_response", store::Encode(exists), 6);
  store::StatsResponse stats;
  stats.objects = 12;
  stats.requests = 99;
  Write(t, "stats_response", store::Encode(stats), 7);
  store::SuspectRanksRequest suspects;
  suspects.ranks = {Rank{1}, Rank{3}};
  Write(t, "suspect_ranks_request", store::Encode(suspects), 8);
}

void SsdSeeds() {
  const char* t = "fuzz_ssd_messages";
  store::SpillRequest spill;
  spill.entries = {{7, "req42/block0", 1, 0, 4096, 11}, {8, "req42/block1", 2, 4096, 4096, 12}};
  Write(t, "spill_request", store::Encode(spill), 0);
  store::SpillResponse spilled;
  spilled.entries = {{store::ToEntry(Status::Ok()), (1ull << 32) | 3},
                     {store::ToEntry(Status{ErrorCode::kBusy, "queue full"}), 0}};
  Write(t, "spill_response", store::Encode(spilled), 1);
  store::PromoteRequest promote;
  promote.entries = {{"req42/block0", 1, 8192, 4096}};
  Write(t, "promote_request", store::Encode(promote), 2);
  store::SsdReadResponse read;
  read.entries = {{store::ToEntry(Status::Ok()), std::vector<std::byte>(64, std::byte{0x5a})},
                  {store::ToEntry(NotFound("dropped")), {}}};
  Write(t, "ssd_read_response", store::Encode(read), 3);
  store::SsdDropNotice drop;
  drop.blocks = {{"req42/block0", 1, 4096, 11, 3}};
  Write(t, "ssd_drop_notice", store::Encode(drop), 4);
  store::RecoveredBlocks recovered;
  recovered.dropped = 1;
  recovered.files = 2;
  recovered.blocks = {{"req42/block0", 1, 4096, 11, 3}, {"req42/block1", 2, 100, 12, (1ull << 32)}};
  Write(t, "recovered_blocks", store::Encode(recovered), 5);
}

void ServeSeeds() {
  const char* t = "fuzz_serve_messages";
  serve::PrefillTask task;
  task.request = 42;
  task.input_length = 1500;
  task.output_length = 100;
  task.decode_rank = 3;
  task.local_prefix_blocks = 1;
  task.prefix_blocks = 2;
  task.prefix_tokens = 1024;
  task.arrival_wall_ns = 123456789;
  task.hash_ids = {10, 11, 12};
  Write(t, "prefill_task", task.Encode(), 0);
  Write(t, "kv_offer", serve::KvOffer{{}, {42, 0}, 3 << 20}.Encode(), 1);
  Write(t, "kv_offer_reply", serve::KvOfferReply{{}, 0x7f0000001000}.Encode(), 2);
  serve::KvDone done;
  done.request = 42;
  done.prefill_rank = 2;
  done.input_length = 1500;
  done.remote_addr = 0x7f0000001000;
  done.hash_ids = {10, 11, 12};
  done.checksums = {0x1111, 0x2222, 0x3333};
  Write(t, "kv_done", done.Encode(), 3);
  serve::PrefillDone pd;
  pd.request = 42;
  pd.blocks_loaded = 2;
  pd.compute_model_s = 0.125;
  Write(t, "prefill_done", pd.Encode(), 4);
  Write(t, "kv_arrived", serve::KvArrived{{}, {42, 0}, 3, 3, 0}.Encode(), 5);
  Write(t, "kv_arrived_reply", serve::KvArrivedReply{{}, 1}.Encode(), 6);
  serve::DecodeDone dd;
  dd.request = 42;
  dd.decode_rank = 3;
  dd.tokens = 100;
  dd.tbt_model_s = 0.03;
  Write(t, "decode_done", dd.Encode(), 7);
  cluster::MembershipView view;
  view.epoch = 2;
  view.conductor = 0;
  view.live = {0, 1, 2, 3};
  view.roles = {0, 1, 2, 3};
  view.dead = {4};
  Write(t, "membership_view", view.Encode(), 8);
  serve::RankReport report;
  report.blocks_verified = 30;
  report.tokens = 1000;
  report.ssd = {1, 2, 3};
  report.SetRefusals({{"unknown", 160}, {"attached:127.0.0.1:40000", 2}});
  Write(t, "rank_report", report.Encode(), 9);
  serve::DecodeTokens tokens;
  tokens.decode_rank = 3;
  tokens.requests = {42, 43};
  tokens.attempts = {0, 1};
  tokens.offsets = {1, 5};
  tokens.counts = {2, 1};
  tokens.tokens = {7, 8, 9};
  Write(t, "decode_tokens", tokens.Encode(), 10);
}

void TransportSeeds() {
  store::KeysRequest keys;
  keys.keys = Keys(2);
  auto payload = store::Encode(keys);
  using transport::FrameKind;
  const transport::JobToken token{0x0123456789abcdefull, 0xfedcba9876543210ull};
  Write("fuzz_rpc_frame", "request",
        transport::EncodeFrame(FrameKind::kRequest, 0x0404, ErrorCode::kOk, 7, payload, token));
  Write("fuzz_rpc_frame", "response_error",
        transport::EncodeFrame(FrameKind::kResponse, 0x0404, ErrorCode::kNotFound, 7, {}));
  Write("fuzz_rpc_frame", "one_way",
        transport::EncodeFrame(FrameKind::kOneWay, 0x0202, ErrorCode::kOk, 0, payload));
  transport::RemoteDescriptor d;
  d.addr = 0x7f0000000000;
  d.length = 64 << 20;
  d.packed_key = std::vector<std::byte>(40, std::byte{0x11});
  Write("fuzz_remote_descriptor", "host", d.Encode());
  cluster::PeerInfo peer;
  peer.role = cluster::Role::kStore;
  peer.host = "node07";
  peer.regions = {d};
  const std::vector<std::byte> address(48, std::byte{0x22});  // a UCX worker address
  Write("fuzz_bootstrap_record", "store_rank", cluster::EncodePeerRecord(peer, address));
  d.type = transport::MemoryType::kCuda;
  d.packed_key.clear();
  Write("fuzz_remote_descriptor", "cuda_no_key", d.Encode());
  peer.role = cluster::Role::kDecode;
  peer.regions = {d, d};
  Write("fuzz_bootstrap_record", "decode_rank", cluster::EncodePeerRecord(peer, address));
}

void TextSeeds(const fs::path& configs) {
  trace::TraceRequest r;
  r.timestamp_ms = 27482;
  r.input_length = 1500;
  r.output_length = 12;
  r.hash_ids = {BlockHash{46}, BlockHash{47}, BlockHash{48}};
  WriteText("fuzz_trace_line", "three_blocks", trace::FormatTraceLine(r));
  r.input_length = 0;
  r.hash_ids.clear();
  WriteText("fuzz_trace_line", "empty_prompt", trace::FormatTraceLine(r));
  const std::string sizes[] = {"2GiB", "64KiB", "1.5GB", "4096", FormatBytes(3 << 20)};
  const std::string times[] = {"100ms", "30s", "250us", "2min", FormatDuration(Nanos(1500000))};
  int i = 0;
  for (const auto& s : sizes) WriteText("fuzz_units", "size" + std::to_string(i++), s, 0);
  for (const auto& s : times) WriteText("fuzz_units", "time" + std::to_string(i++), s, 1);
  for (const char* sub : {"models", "hardware"}) {
    for (const auto& e : fs::directory_iterator(configs / sub)) {
      fs::create_directories(out_root / "fuzz_ini");
      fs::copy_file(e.path(),
                    out_root / "fuzz_ini" / (std::string(sub) + "_" + e.path().filename().string()),
                    fs::copy_options::overwrite_existing);
    }
  }
  for (const char* name : {"serve/small.ini", "serve/faults.ini", "serve/policies.ini"}) {
    fs::create_directories(out_root / "fuzz_job_options");
    fs::path p = configs / name;
    fs::copy_file(p, out_root / "fuzz_job_options" / p.filename(),
                  fs::copy_options::overwrite_existing);
  }
}

// The raw /index and /blocks bytes of a bucket file the tier wrote (hdf5_template.h).
int HdfSeed() {
  std::string dir = (fs::temp_directory_path() / "mooncake-seed-XXXXXX").string();
  if (mkdtemp(dir.data()) == nullptr) return 1;
  auto t = fuzz::MakeBucketTemplate(dir);
  fs::remove_all(dir);
  if (!t.ok()) {
    std::cerr << t.status().ToString() << "\n";
    return 1;
  }
  std::vector<std::byte> seed(t->file.begin() + t->index_at,
                              t->file.begin() + t->index_at + t->index_bytes);
  seed.insert(seed.end(), t->file.begin() + t->blocks_at,
              t->file.begin() + t->blocks_at + t->blocks_bytes);
  Write("fuzz_hdf5_recovery", "three_blocks", seed);
  return 0;
}

}  // namespace

// Connection files as a store job writes them: a small job, and one with every field set.
void ConnectionFileSeeds() {
  client::ConnectionInfo info;
  info.token = transport::JobToken{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  info.world_size = 3;
  info.master_addresses = {"127.0.0.1:41000"};
  info.store_ranks = {1, 2};
  WriteText("fuzz_connection_file", "small", client::ConnectionFileText(info));
  info.world_size = 5;
  info.master_addresses = {"10.1.2.3:41000", "node17:41000", "127.0.0.1:41000"};
  info.store_ranks = {1, 2, 3, 4};
  info.dram_per_rank = 8ULL << 30;
  info.ssd = true;
  info.replicas = 2;
  info.mooncake_version = "0.1.0";
  info.cluster_id = "eac63561fb6d22c3";
  info.run_dir = "runs/20261125-120000";
  info.host = "node17";
  info.pid = 4242;
  info.created = "2026-11-25T12:00:00Z";
  WriteText("fuzz_connection_file", "full", client::ConnectionFileText(info));
}

void P2pSeeds() {
  const char* t = "fuzz_p2p_messages";
  transport::RemoteDescriptor d;
  d.addr = 0x7f0000000000;
  d.length = 8 << 20;
  d.packed_key = std::vector<std::byte>(40, std::byte{0x11});
  p2p::Manifest m;
  m.name = "llama-70b/weights";
  m.piece_size = 4 << 20;
  m.entries = {{"shard-0.bin", 6 << 20, 0644}, {"shard-1.bin", 1 << 20, 0600}};
  m.checksums = {0x1111, 0x2222, 0x3333};
  p2p::HolderCopy copy;
  copy.rank = 2;
  copy.complete = true;
  copy.entry_addrs = {0x7f0000000000, 0x7f0000600000};
  copy.descriptors = {d.Encode()};
  Write(t, "register", WireEncode(p2p::RegisterRequest{m, copy}), 0);
  Write(t, "name", WireEncode(p2p::NameRequest{m.name}), 1);
  p2p::HolderCopy empty;
  empty.rank = 5;
  empty.entry_addrs = {0x7f1000000000, 0x7f1000600000};
  empty.descriptors = {d.Encode()};
  Write(t, "join", WireEncode(p2p::JoinRequest{m.name, empty}), 2);
  p2p::UpdateRequest u;
  u.name = m.name;
  u.since = 7;
  u.landed = {0, 2};
  u.started = {1};
  u.bad = {{2, 1}};
  u.failed = {3};
  Write(t, "update", WireEncode(u), 3);
  p2p::UpdateResponse ur;
  ur.next = 9;
  ur.holders = {empty};
  ur.events = {{p2p::EventKind::kJoined, 5, 0}, {p2p::EventKind::kLanded, 5, 2}};
  Write(t, "update_response", WireEncode(ur), 4);
  p2p::RankReport rr;
  rr.rank = 5;
  rr.ok = true;
  rr.bytes = 7 << 20;
  rr.from_source = 2;
  rr.from_peers = 1;
  Write(t, "rank_report", WireEncode(rr), 5);
  p2p::HeartbeatResponse hb;
  hb.done = {2, 5};
  hb.dead = {3};
  Write(t, "heartbeat", WireEncode(hb), 6);
  p2p::ListResponse list;
  list.objects = {{m.name, 7 << 20, 2, 2, 1}};
  Write(t, "list", WireEncode(list), 7);
  Write(t, "manifest", p2p::EncodeManifest(m), 8);
  store::StoreDirectory dir;
  dir.world_size = 4;
  dir.master = Rank{0};
  dir.default_replicas = 2;
  dir.ssd = true;
  dir.store_ranks = {{Rank{1}, {"127.0.0.1"}, 40001, d.Encode()},
                     {Rank{2}, {"10.0.0.2", "127.0.0.1"}, 40002, d.Encode()}};
  Write(t, "store_directory", dir.Encode(), 9);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: make_fuzz_seeds OUT_DIR CONFIGS_DIR\n";
    return 2;
  }
  out_root = argv[1];
  StoreSeeds();
  SsdSeeds();
  ServeSeeds();
  TransportSeeds();
  TextSeeds(argv[2]);
  ConnectionFileSeeds();
  P2pSeeds();
  return HdfSeed();
}
