// Scheduling policies and reasons, with their config/CSV names.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace mooncake::conductor {

// How a prefill instance is chosen (Mooncake Fig. 5).
enum class PrefillPolicy : uint8_t {
  kRandom,          // uniform choice (seeded)
  kLoadBalance,     // smallest predicted queue time
  kCacheAware,      // smallest queue + prefill time using each instance's local prefix only
  kKvCacheCentric,  // Algorithm 1: also fetch a longer remote prefix; hot blocks replicate
};

// When the decode side's load is checked (arXiv report, section on overload).
enum class EarlyRejection : uint8_t {
  kOff,        // only at decode join, after the prefill was spent
  kCurrent,    // at arrival, with the decode load of now
  kPredicted,  // at arrival, with the decode load forecast for the prefill's end
};

enum class RejectReason : uint8_t {
  kNone,
  kTtftSlo,          // predicted TTFT above the SLO
  kTbtSloCurrent,    // current decode load would break the TBT SLO (early_rejection=current)
  kTbtSloPredicted,  // forecast decode load would break the TBT SLO (early_rejection=predicted)
  kDecodeOverload,   // a decode instance refused the request after its prefill
  kNoLiveInstance,   // every prefill (or decode) instance's rank is dead
};
inline constexpr int kRejectReasonCount = 6;

Result<PrefillPolicy> ParsePrefillPolicy(std::string_view name);
Result<EarlyRejection> ParseEarlyRejection(std::string_view name);
const char* PrefillPolicyName(PrefillPolicy p);
const char* EarlyRejectionName(EarlyRejection e);
const char* RejectReasonName(RejectReason r);

}  // namespace mooncake::conductor
