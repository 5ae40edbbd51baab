// The request parameters of a UCX send (ucp_am_send_nbx, ucp_put_nbx, ucp_get_nbx,
// ucp_ep_flush_nbx) that calls `done` with `user_data` when it completes. Not included outside
// this folder.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>

namespace mooncake::transport {

// `flags`: UCP_AM_SEND_FLAG_REPLY where the receiver checks which of its endpoints the message
// came on, UCP_AM_SEND_FLAG_EAGER; 0 leaves UCX's defaults.
inline ucp_request_param_t SendParams(ucp_send_nbx_callback_t done, void* user_data,
                                      uint32_t flags = 0) {
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
  if (flags != 0) rp.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
  rp.flags = flags;
  rp.cb.send = done;
  rp.user_data = user_data;
  return rp;
}

}  // namespace mooncake::transport
