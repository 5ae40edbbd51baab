// The job's transport.* options (group "Transport (UCX)"): the UCX transports and devices, how
// READ/WRITE bytes move, the slice sizes and busy polling. Errors name the option.
#pragma once

#include <boost/program_options.hpp>
#include <string>

#include "common/status.h"
#include "transport/factory/transport_factory.h"

namespace mooncake::transport {

// The option strings as parsed, converted by ConvertTransportOptions.
struct RawTransportOptions {
  std::string tls, devices, data_path, rma_slice, am_slice;
  bool busy_poll = false;
};

// Which of the options a command offers: all of them (the job), or the transports, the devices
// and the data path only (`mooncake p2p`, whose transfers keep the default slices).
enum class TransportOptionSet { kAll, kPath };

boost::program_options::options_description TransportOptionsDescription(
    RawTransportOptions* raw, TransportOptionSet set = TransportOptionSet::kAll);

Status ConvertTransportOptions(const RawTransportOptions& raw, TransportConfig* out,
                               TransportOptionSet set = TransportOptionSet::kAll);

// transport.data_path: auto | rma | am.
Status ParseDataPath(const std::string& word, DataPath* path);

}  // namespace mooncake::transport
