// UcxTransport's UCX context (transport.tls, transport.devices and the tcp settings over UCX's
// configuration) and its worker.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "common/log.h"
#include "transport/ucx/ucx_impl.h"

namespace mooncake::transport {

// The UCX context, configured from transport.tls / transport.devices (over UCX_* variables).
// An RDMA transport pinned by the user needs an RDMA device here: without one UCX quietly uses
// the other transports of the list (shared memory), which is not what was asked for.
static Status CheckRdmaPin(const std::string& user_tls) {
  const TlsFamilies families = ClassifyTls(ResolveTls(user_tls));
  if (!families.pinned || !families.rdma) return Status::Ok();
  std::error_code ec;
  const std::filesystem::path ib = "/sys/class/infiniband";
  if (std::filesystem::is_directory(ib, ec) && !std::filesystem::is_empty(ib, ec)) {
    return Status::Ok();
  }
  return InvalidArgument("transport.tls = '" + user_tls +
                         "' pins RDMA, but this host has no RDMA device (" + ib.string() +
                         " is empty or missing); use auto to take what the host has, or shm / tcp");
}

// The value UCX will use for `key` ("UCX_TLS"), as the environment and ucp_config_modify left
// it: UCX has no getter for one field, so it is read off ucp_config_print's "UCX_TLS=..." line.
static std::string ConfiguredValue(const ucp_config_t* cfg, const std::string& key) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  if (out == nullptr) return "";
  ucp_config_print(cfg, out, nullptr, UCS_CONFIG_PRINT_CONFIG);
  std::fclose(out);
  std::string printed(text, size);
  std::free(text);
  const std::string line = key + "=";
  size_t at = printed.rfind("\n" + line);
  if (at != std::string::npos) {
    ++at;
  } else if (printed.compare(0, line.size(), line) == 0) {
    at = 0;
  } else {
    return "";
  }
  const size_t end = printed.find('\n', at);
  return printed.substr(at + line.size(), end == std::string::npos ? end : end - at - line.size());
}

// UCX_NET_DEVICES as UCX read it (from the environment, or transport.devices). Empty for "all".
static std::string ConfiguredNetDevices(const ucp_config_t* cfg) {
  std::string value = ConfiguredValue(cfg, "UCX_NET_DEVICES");
  return value == "all" ? "" : value;
}

Status UcxTransport::CreateContext() {
  MC_RETURN_IF_ERROR(CheckRdmaPin(config_.tls));
  ucp_config_t* cfg = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &cfg);
  if (st != UCS_OK) return UcxError("ucp_config_read", st);
  std::string tls = ResolveTls(config_.tls);
  if (!tls.empty() && (st = ucp_config_modify(cfg, "TLS", tls.c_str())) != UCS_OK) {
    ucp_config_release(cfg);
    return Status(ErrorCode::kInvalidArgument,
                  "transport.tls = '" + config_.tls +
                      "' is not a valid UCX_TLS list: " + ucs_status_string(st));
  }
  if (!config_.devices.empty() &&
      (st = ucp_config_modify(cfg, "NET_DEVICES", config_.devices.c_str())) != UCS_OK) {
    ucp_config_release(cfg);
    return Status(ErrorCode::kInvalidArgument, "transport.devices = '" + config_.devices +
                                                   "' is not valid: " + ucs_status_string(st));
  }
  // A transport-level setting: UCX keeps it and applies it to each interface it opens, by the
  // name inside that transport's table (tcp: RX_SEG_SIZE; shm and rdma have none by that name).
  // UCX warns "invalid configuration" when no interface took it, so it is set only where a tcp
  // interface may open. There it is set whatever else is configured, in job ranks and attached
  // processes alike: the two ends of a tcp connection must agree on it (UcxConfig).
  if (TcpMayOpen(ConfiguredValue(cfg, "UCX_TLS")) && !config_.tcp_rx_seg_size.empty() &&
      (st = ucp_config_modify(cfg, "RX_SEG_SIZE", config_.tcp_rx_seg_size.c_str())) != UCS_OK) {
    log::Warn("UCX RX_SEG_SIZE={} not applied: {}", config_.tcp_rx_seg_size, ucs_status_string(st));
  }
  // The rendezvous threshold only where every lane is tcp (UcxConfig::tcp_rndv_thresh).
  const TlsFamilies families = ClassifyTls(ResolveTls(config_.tls));
  const bool tcp_only = families.tcp && !families.shm && !families.rdma;
  if (tcp_only && !config_.tcp_rndv_thresh.empty() &&
      (st = ucp_config_modify(cfg, "RNDV_THRESH", config_.tcp_rndv_thresh.c_str())) != UCS_OK) {
    log::Warn("UCX RNDV_THRESH={} not applied: {}", config_.tcp_rndv_thresh, ucs_status_string(st));
  }
  net_devices_ = ConfiguredNetDevices(cfg);
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  ucp_context_h context = nullptr;
  st = ucp_init(&params, cfg, &context);
  ucp_config_release(cfg);
  context_.reset(context);
  if (st != UCS_OK) {
    return Status(ErrorCode::kInvalidArgument,
                  "UCX could not start with UCX_TLS='" + tls + "': " + ucs_status_string(st));
  }
  return Status::Ok();
}

// One multi-threaded worker (posting threads and the progress thread share it) and its address.
Status UcxTransport::CreateWorker() {
  ucs_status_t st;
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_MULTI;  // posting threads and the progress thread share it
  ucp_worker_h worker = nullptr;
  if ((st = ucp_worker_create(context_.get(), &wp, &worker)) != UCS_OK) {
    return UcxError("ucp_worker_create", st);
  }
  worker_.reset(worker);
  ucp_worker_attr_t wa{};
  wa.field_mask = UCP_WORKER_ATTR_FIELD_THREAD_MODE;
  ucp_worker_query(worker_.get(), &wa);
  if (wa.thread_mode != UCS_THREAD_MODE_MULTI) {
    return Internal("this UCX build has no multi-threaded worker support (--enable-mt)");
  }
  ucp_address_t* address = nullptr;
  size_t address_length = 0;
  if ((st = ucp_worker_get_address(worker_.get(), &address, &address_length)) != UCS_OK) {
    return UcxError("ucp_worker_get_address", st);
  }
  auto* p = reinterpret_cast<const std::byte*>(address);
  local_address_.assign(p, p + address_length);
  ucp_worker_release_address(worker_.get(), address);
  return Status::Ok();
}

}  // namespace mooncake::transport
