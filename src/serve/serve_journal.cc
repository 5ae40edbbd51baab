#include "serve/serve_journal.h"

namespace mooncake::serve {

void RequestState::ToRecord(trace::RequestRecord* r) const {
  r->outcome = static_cast<trace::Outcome>(outcome);
  r->reject_reason = reject_reason;
  r->prefilled = prefilled != 0;
  r->prefill_instance = prefill;
  r->decode_instance = decode;
  r->prefix_blocks_hit = prefix_blocks_hit;
  r->inflight_miss_blocks = inflight_miss_blocks;
  r->ttft_s = ttft_s;
  r->tbt_s = tbt_s;
  r->e2e_s = e2e_s;
  r->prefill_compute_s = prefill_compute_s;
  r->ttft_predicted_s = ttft_predicted_s;
}

void RequestState::FromRecord(const trace::RequestRecord& r) {
  outcome = static_cast<uint8_t>(r.outcome);
  reject_reason = r.reject_reason;
  prefilled = r.prefilled ? 1 : 0;
  prefix_blocks_hit = r.prefix_blocks_hit;
  inflight_miss_blocks = r.inflight_miss_blocks;
  ttft_s = r.ttft_s;
  tbt_s = r.tbt_s;
  e2e_s = r.e2e_s;
  prefill_compute_s = r.prefill_compute_s;
  ttft_predicted_s = r.ttft_predicted_s;
}

}  // namespace mooncake::serve
