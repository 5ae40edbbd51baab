#pragma once

// The metadata master's numbers in Prometheus form, collected at scrape time (the store-service
// job's --store.metrics_port, the serving job's /metrics): objects, requests, puts in flight,
// evictions, spills, re-replications, losses by cause, and each store rank's DRAM occupancy.
// Names and units follow Prometheus conventions (mooncake_store_*, _bytes, _total).

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "http/http_server.h"
#include "http/prometheus_text.h"
#include "store/net/master_service.h"

namespace mooncake::serve {

// Appends the master's metrics to `out`. `store_ranks` are the ranks whose segments it reports
// (a rank without one, e.g. dead and removed, is skipped); `dead_ranks` is the job's count.
void AppendMasterMetrics(store::MasterService& master, const std::vector<Rank>& store_ranks,
                         size_t dead_ranks, http::PrometheusText* out);

// Serves GET /metrics (the above, collected at each scrape) and GET /health ("ok") on
// host:port (0: any free port) until the returned server is stopped or destroyed.
// `dead_ranks` is asked at each scrape. The master and the callable must outlive the server.
Result<std::unique_ptr<http::HttpServer>> ServeMasterMetrics(const std::string& host, int port,
                                                             store::MasterService& master,
                                                             std::vector<Rank> store_ranks,
                                                             std::function<size_t()> dead_ranks);

// Says where a started metrics server is: http://HOST:PORT/metrics, HOST being `listen` or, when
// that is 0.0.0.0, `hostname`; printed and written as {url, host, port} to
// `run_dir`/metrics.json for scrape configs.
void AnnounceMasterMetrics(const http::HttpServer& server, const std::string& listen,
                           const std::string& hostname, const std::string& run_dir);

}  // namespace mooncake::serve
