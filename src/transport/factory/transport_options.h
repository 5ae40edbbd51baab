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

boost::program_options::options_description TransportOptionsDescription(RawTransportOptions* raw);

Status ConvertTransportOptions(const RawTransportOptions& raw, TransportConfig* out);

// transport.data_path: auto | rma | am (the main command and `mooncake p2p` share it).
Status ParseDataPath(const std::string& word, DataPath* path);

}  // namespace mooncake::transport
