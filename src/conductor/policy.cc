#include "conductor/policy.h"

#include <string>

#include "common/enum_names.h"

namespace mooncake::conductor {

namespace {

constexpr EnumName<PrefillPolicy> kPolicies[] = {
    {PrefillPolicy::kRandom, "random"},
    {PrefillPolicy::kLoadBalance, "load_balance"},
    {PrefillPolicy::kCacheAware, "cache_aware"},
    {PrefillPolicy::kKvCacheCentric, "kvcache_centric"}};
constexpr EnumName<EarlyRejection> kEarlyRejections[] = {{EarlyRejection::kOff, "off"},
                                                         {EarlyRejection::kCurrent, "current"},
                                                         {EarlyRejection::kPredicted, "predicted"}};
constexpr EnumName<RejectReason> kRejectReasons[] = {
    {RejectReason::kNone, ""},
    {RejectReason::kTtftSlo, "ttft_slo"},
    {RejectReason::kTbtSloCurrent, "tbt_slo_current"},
    {RejectReason::kTbtSloPredicted, "tbt_slo_predicted"},
    {RejectReason::kDecodeOverload, "decode_overload"},
    {RejectReason::kNoLiveInstance, "no_live_instance"}};

}  // namespace

Result<PrefillPolicy> ParsePrefillPolicy(std::string_view name) {
  return ParseIn(kPolicies, name, "conductor.policy");
}
Result<EarlyRejection> ParseEarlyRejection(std::string_view name) {
  return ParseIn(kEarlyRejections, name, "conductor.early_rejection");
}
const char* PrefillPolicyName(PrefillPolicy p) { return NameIn(kPolicies, p); }
const char* EarlyRejectionName(EarlyRejection e) { return NameIn(kEarlyRejections, e); }
const char* RejectReasonName(RejectReason r) { return NameIn(kRejectReasons, r); }

}  // namespace mooncake::conductor
