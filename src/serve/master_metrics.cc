#include "serve/master_metrics.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "common/log.h"
#include "common/replace_file.h"

namespace mooncake::serve {

void AppendMasterMetrics(store::MasterService& master, const std::vector<Rank>& store_ranks,
                         size_t dead_ranks, http::PrometheusText* out) {
  const store::StatsResponse rpc = master.Stats();
  struct Segment {
    Rank rank;
    store::AllocatorStats stats;
  };
  std::vector<Segment> segments;
  const store::MasterStats m = master.WithMaster([&](store::MetadataMaster& mm) {
    for (Rank r : store_ranks) {
      if (auto s = mm.SegmentStats(r); s.ok()) segments.push_back({r, *s});
    }
    return mm.Stats();
  });
  auto d = [](uint64_t v) { return static_cast<double>(v); };
  http::PrometheusText& t = *out;
  t.Gauge("mooncake_store_objects", "Visible objects in the store.", d(m.objects));
  t.Gauge("mooncake_store_puts_in_flight", "Puts started and not yet ended or revoked.",
          d(m.in_flight_puts));
  t.Counter("mooncake_store_requests_total", "RPC requests the metadata master served.",
            d(rpc.requests));
  t.Counter("mooncake_store_get_keys_total", "Keys asked for by gets.", d(rpc.get_keys));
  t.Counter("mooncake_store_exists_keys_total", "Keys asked for by exists.", d(rpc.exists_keys));
  t.Counter("mooncake_store_evicted_replicas_total", "DRAM replicas evicted (dropped or spilled).",
            d(m.evicted_replicas));
  t.Counter("mooncake_store_spilled_replicas_total", "Evicted DRAM replicas the SSD tier took.",
            d(m.spilled_replicas));
  t.Counter("mooncake_store_revoked_puts_total", "Puts revoked (by the client or a timeout).",
            d(m.revoked_puts));
  t.Counter("mooncake_store_timed_out_puts_total", "Puts revoked because they were not ended.",
            d(m.timed_out_puts));
  t.Counter("mooncake_store_puts_refused_no_space_total", "Puts refused: no room (when_full keep).",
            d(m.puts_refused_no_space));
  t.Counter("mooncake_store_ssd_hits_total", "Gets answered from SSD replicas only.",
            d(m.ssd_hits));
  t.Gauge("mooncake_store_ssd_replicas", "Replicas held by the SSD tier.", d(m.ssd_replicas));
  t.Counter("mooncake_store_rereplications_started_total",
            "Re-replication copies ordered after a rank loss.", d(m.copies_started));
  t.Counter("mooncake_store_rereplications_total", "Re-replication copies completed.",
            d(m.rereplicated));
  const char* lost_help = "Acknowledged objects gone without a remove, by cause.";
  t.Counter("mooncake_store_objects_lost_total", lost_help, d(m.objects_lost),
            {{"cause", "rank_died"}});
  t.Counter("mooncake_store_objects_lost_total", lost_help, d(m.dropped_unspilled),
            {{"cause", "evicted_unspilled"}});
  t.Counter("mooncake_store_objects_lost_total", lost_help, d(m.dropped_by_tier),
            {{"cause", "ssd_lru"}});
  t.Gauge("mooncake_store_dead_ranks", "Ranks the failure detector declared dead.",
          static_cast<double>(dead_ranks));
  for (const Segment& s : segments) {
    const http::Labels rank{{"rank", std::to_string(s.rank.value)}};
    t.Gauge("mooncake_store_dram_capacity_bytes", "A store rank's DRAM segment size.",
            d(s.stats.capacity), rank);
    t.Gauge("mooncake_store_dram_used_bytes", "Bytes allocated in a store rank's DRAM segment.",
            d(s.stats.used), rank);
  }
}

Result<std::unique_ptr<http::HttpServer>> ServeMasterMetrics(const std::string& host, int port,
                                                             store::MasterService& master,
                                                             std::vector<Rank> store_ranks,
                                                             std::function<size_t()> dead_ranks) {
  http::ServerOptions options;
  options.host = host;
  options.port = port;
  options.threads = 2;  // scrapes are rare; a second thread keeps /health answering during one
  auto metrics = [&master, store_ranks = std::move(store_ranks),
                  dead_ranks = std::move(dead_ranks)](const http::Request&) {
    http::PrometheusText text;
    AppendMasterMetrics(master, store_ranks, dead_ranks(), &text);
    return http::Response{200, http::PrometheusText::kContentType, text.Text(), {}};
  };
  auto health = [](const http::Request&) {
    return http::Response{200, "text/plain; charset=utf-8", "ok\n", {}};
  };
  return http::HttpServer::Start(options,
                                 {{"GET", "/metrics", metrics}, {"GET", "/health", health}});
}

void AnnounceMasterMetrics(const http::HttpServer& server, const std::string& listen,
                           const std::string& hostname, const std::string& run_dir) {
  const std::string host = listen == "0.0.0.0" ? hostname : listen;
  const std::string url = "http://" + host + ":" + std::to_string(server.port()) + "/metrics";
  const int port = server.port();
  const nlohmann::json j = {{"url", url}, {"host", host}, {"port", port}};
  // Replaced whole, since scrapers poll for it.
  const Status written = ReplaceFile(run_dir + "/metrics.json", j.dump() + "\n");
  if (!written.ok()) log::Error("{}", written.message());
  std::printf("metrics: %s (Prometheus text format; /health beside it)\n", url.c_str());
}

}  // namespace mooncake::serve
