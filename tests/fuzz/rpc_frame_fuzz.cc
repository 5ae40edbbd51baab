// Fuzzes the RPC frame decoder (transport/rpc.h DecodeFrame): every byte a peer sends reaches it
// first. A frame that decodes must re-encode to the same bytes.
#include "fuzz_check.h"
#include "transport/rpc.h"

using namespace mooncake;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto in = fuzz::AsBytes(data, size);
  (void)transport::FrameLacksToken(in);
  auto frame = transport::DecodeFrame(in);
  if (!frame.ok()) return 0;
  MC_FUZZ_CHECK(frame->payload.size() <= transport::kMaxRpcPayload, "payload over the cap");
  MC_FUZZ_CHECK(frame->payload.empty() ||
                    (frame->payload.data() >= in.data() &&
                     frame->payload.data() + frame->payload.size() == in.data() + in.size()),
                "payload view outside the frame");
  std::vector<std::byte> again = transport::EncodeFrame(
      frame->kind, frame->type, frame->status, frame->call_id, frame->payload, frame->token);
  MC_FUZZ_CHECK(fuzz::SameBytes(again, in), "rpc frame round trip");
  return 0;
}
