#include "transport/factory/transport_options.h"

#include "common/cli/option_table.h"
#include "common/cli/option_values.h"

namespace mooncake::transport {

namespace po = boost::program_options;

po::options_description TransportOptionsDescription(RawTransportOptions* raw,
                                                    TransportOptionSet set) {
  po::options_description d("Transport (UCX)");
  cli::AddOptionRows(
      d,
      {{"transport.tls", cli::Text(&raw->tls, "auto"),
        "auto | shm | tcp | rdma | a raw UCX_TLS list (e.g. posix,cma,self)"},
       {"transport.devices", cli::Text(&raw->devices, ""),
        "raw UCX_NET_DEVICES (e.g. mlx5_0:1); empty lets UCX choose"},
       {"transport.data_path", cli::Text(&raw->data_path, "auto"),
        "auto | rma | am: how READ/WRITE bytes move (auto: AM rendezvous on tcp, RMA elsewhere)"}});
  if (set == TransportOptionSet::kPath) return d;
  cli::AddOptionRows(
      d, {{"transport.rma_slice", cli::Text(&raw->rma_slice, "1MiB"),
           "slice size of RMA transfers (4KiB..1GiB; 1MiB measured best, docs/TRANSFER.md)"},
          {"transport.am_slice", cli::Text(&raw->am_slice, "4MiB"),
           "slice size of active-message transfers (4KiB..1GiB)"},
          {"transport.busy_poll", po::bool_switch(&raw->busy_poll),
           "progress thread never sleeps (benchmarks on dedicated cores)"}});
  return d;
}

Status ConvertTransportOptions(const RawTransportOptions& raw, TransportConfig* out,
                               TransportOptionSet set) {
  auto& ucx = out->ucx;
  ucx.tls = raw.tls;
  ucx.devices = raw.devices;
  MC_RETURN_IF_ERROR(ParseDataPath(raw.data_path, &ucx.data_path));
  if (raw.tls.empty())
    return InvalidArgument("transport.tls = '' (allowed: auto, shm, tcp, rdma or a UCX_TLS list)");
  if (set == TransportOptionSet::kPath) return Status::Ok();
  ucx.busy_poll = raw.busy_poll;
  uint64_t v = 0;
  MC_RETURN_IF_ERROR(cli::SizeOption("transport.rma_slice", raw.rma_slice, 4096, 1ull << 30, &v));
  ucx.rma_slice = v;
  MC_RETURN_IF_ERROR(cli::SizeOption("transport.am_slice", raw.am_slice, 4096, 1ull << 30, &v));
  ucx.am_slice = v;
  return Status::Ok();
}

Status ParseDataPath(const std::string& word, DataPath* path) {
  return cli::ChoiceOption(
      "transport.data_path", word,
      {{"auto", DataPath::kAuto}, {"rma", DataPath::kRma}, {"am", DataPath::kActiveMessage}}, path);
}

}  // namespace mooncake::transport
