#include "conductor/policy.h"

#include <string>

namespace mooncake::conductor {

Result<PrefillPolicy> ParsePrefillPolicy(std::string_view name) {
  if (name == "random") return PrefillPolicy::kRandom;
  if (name == "load_balance") return PrefillPolicy::kLoadBalance;
  if (name == "cache_aware") return PrefillPolicy::kCacheAware;
  if (name == "kvcache_centric") return PrefillPolicy::kKvCacheCentric;
  return InvalidArgument("conductor.policy: '" + std::string(name) +
                         "' is not one of random, load_balance, cache_aware, kvcache_centric");
}

Result<EarlyRejection> ParseEarlyRejection(std::string_view name) {
  if (name == "off") return EarlyRejection::kOff;
  if (name == "current") return EarlyRejection::kCurrent;
  if (name == "predicted") return EarlyRejection::kPredicted;
  return InvalidArgument("conductor.early_rejection: '" + std::string(name) +
                         "' is not one of off, current, predicted");
}

const char* PrefillPolicyName(PrefillPolicy p) {
  switch (p) {
    case PrefillPolicy::kRandom:
      return "random";
    case PrefillPolicy::kLoadBalance:
      return "load_balance";
    case PrefillPolicy::kCacheAware:
      return "cache_aware";
    case PrefillPolicy::kKvCacheCentric:
      return "kvcache_centric";
  }
  return "unknown";
}

const char* EarlyRejectionName(EarlyRejection e) {
  switch (e) {
    case EarlyRejection::kOff:
      return "off";
    case EarlyRejection::kCurrent:
      return "current";
    case EarlyRejection::kPredicted:
      return "predicted";
  }
  return "unknown";
}

const char* RejectReasonName(RejectReason r) {
  switch (r) {
    case RejectReason::kNone:
      return "";
    case RejectReason::kTtftSlo:
      return "ttft_slo";
    case RejectReason::kTbtSloCurrent:
      return "tbt_slo_current";
    case RejectReason::kTbtSloPredicted:
      return "tbt_slo_predicted";
    case RejectReason::kDecodeOverload:
      return "decode_overload";
    case RejectReason::kNoLiveInstance:
      return "no_live_instance";
  }
  return "unknown";
}

}  // namespace mooncake::conductor
