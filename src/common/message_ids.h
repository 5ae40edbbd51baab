// Every message id of the control plane (transport::Rpc's handler key; a response reuses its
// request's id), in one table. Each component's ids stay in its own range, so a new message is
// added to its component's list below and nowhere else:
//
//   0x0001-0x00ff  the job check (cluster/check_job.cc)
//   0x0200-0x02ff  the serving job (serve/messages.h); 0x0209 and 0x020a, the membership's
//                  heartbeat and view (cluster/membership.h), began there and stay there
//   0x0400-0x04ff  the store: 0x040x client <-> master (store/net/messages.h), 0x041x the SSD
//                  tier (store/net/ssd_messages.h), 0x042x the master's journal to its standby,
//                  0x043x store ranks that join or drain (store/net/join_drain_messages.h)
//   0x0500-0x05ff  P2P distribution: ranks <-> the tracker (p2p/messages.h)
//
// Each list generates its component's enum (same names and namespaces as before the table) and
// the entries of kMessageComponents, over which static_asserts below prove at compile time that
// no two messages share an id and that each id lies in its component's range.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

// X(enumerator, id)  /* what it carries */
#define MOONCAKE_CHECK_MESSAGES(X)                                \
  X(kPing, 0x0001) /* empty request and reply: RTT measurement */ \
  X(kStop, 0x0002) /* conductor -> every rank: finish and shut down */

#define MOONCAKE_MEMBERSHIP_MESSAGES(X)                                    \
  X(kMsgHeartbeat, 0x0209)  /* every rank -> conductor; reply: the view */ \
  X(kMsgMembership, 0x020a) /* conductor -> every rank on a change */

#define MOONCAKE_SERVE_MESSAGES(X)                                                              \
  X(kMsgClockSync, 0x0201)    /* empty request; reply: the conductor's steady clock (ns) */     \
  X(kMsgPrefillTask, 0x0202)  /* PrefillTask, one-way */                                        \
  X(kMsgKvOffer, 0x0203)      /* KvOffer; reply: KvOfferReply */                                \
  X(kMsgKvDone, 0x0204)       /* KvDone, one-way */                                             \
  X(kMsgPrefillDone, 0x0205)  /* PrefillDone, one-way */                                        \
  X(kMsgKvArrived, 0x0206)    /* KvArrived; reply: KvArrivedReply */                            \
  X(kMsgDecodeDone, 0x0207)   /* DecodeDone, one-way */                                         \
  X(kMsgStop, 0x0208)         /* conductor -> every rank: finish; empty request and reply */    \
  X(kMsgReport, 0x020b)       /* every rank -> conductor at the end: RankReport; empty reply */ \
  X(kMsgShutdown, 0x020c)     /* conductor -> every rank: the job is over (MembershipView) */   \
  X(kMsgDecodeTokens, 0x020d) /* DecodeTokens, one-way */                                       \
  /* conductor -> a drained store rank: leave the job now (exit 0, no report); empty */         \
  X(kMsgLeave, 0x0220)                                                                          \
  /* active conductor -> standby, one-way: ServeJournalBatch (serve/serve_journal.h) */         \
  X(kMsgServeJournal, 0x0221)

#define MOONCAKE_STORE_MESSAGES(X)                                                          \
  X(kPutStart, 0x0401)     /* PutStartRequest; PutStartResponse */                          \
  X(kPutEnd, 0x0402)       /* PutEndRequest; StatusResponse */                              \
  X(kPutRevoke, 0x0403)    /* KeysRequest; StatusResponse */                                \
  X(kGet, 0x0404)          /* KeysRequest; GetResponse */                                   \
  X(kExists, 0x0405)       /* KeysRequest; ExistsResponse */                                \
  X(kRemove, 0x0406)       /* KeysRequest; StatusResponse */                                \
  X(kStats, 0x0407)        /* empty request; StatsResponse */                               \
  X(kDirectory, 0x0408)    /* empty request; StoreDirectory (directory.h) */                \
  X(kServiceStop, 0x0409)  /* empty request and answer: the store service stops in order */ \
  X(kSuspectRanks, 0x040a) /* SuspectRanksRequest: a client's writes there failed */        \
  /* RecoveredBlocks from a store rank's SSD tier, in parts; store ranks of the job only */ \
  X(kRecoveryReport, 0x040b)                                                                \
  /* JournalBatch (store/journal.h), active master -> standby; empty answer once applied */ \
  X(kJournal, 0x0420)                                                                       \
  X(kDrain, 0x0430) /* DrainRequest; DrainReply, asked again until the rank left */         \
  X(kJoin, 0x0431)  /* JoinRequest; JoinReply */

#define MOONCAKE_SSD_MESSAGES(X)                                                         \
  X(kSpill, 0x0410)        /* master -> store rank: SpillRequest; SpillResponse */       \
  X(kPromote, 0x0411)      /* master -> store rank: PromoteRequest; StatusResponse */    \
  X(kSsdRead, 0x0412)      /* client -> store rank: SsdStageRequest; SsdReadResponse */  \
  X(kSsdDrop, 0x0413)      /* store rank -> master, one-way: SsdDropNotice */            \
  X(kSsdStage, 0x0414)     /* client -> store rank: SsdStageRequest; SsdStageResponse */ \
  X(kSsdRelease, 0x0415)   /* client -> store rank, one-way: SsdReleaseNotice */         \
  X(kSsdTombstone, 0x0416) /* master -> store rank: SsdTombstoneRequest; StatusResponse */

#define MOONCAKE_P2P_MESSAGES(X) \
  X(kRegister, 0x0501)           \
  X(kLookup, 0x0502)             \
  X(kJoin, 0x0503)               \
  X(kUpdate, 0x0504)             \
  X(kDone, 0x0505)               \
  X(kHeartbeat, 0x0506)          \
  X(kLeave, 0x0507)              \
  X(kUnregister, 0x0508)         \
  X(kList, 0x0509)

#define MOONCAKE_MESSAGE_ENUMERATOR(name, id) name = id,

namespace mooncake::cluster {
enum class CheckMsg : uint16_t { MOONCAKE_CHECK_MESSAGES(MOONCAKE_MESSAGE_ENUMERATOR) };
enum MembershipMsg : uint16_t { MOONCAKE_MEMBERSHIP_MESSAGES(MOONCAKE_MESSAGE_ENUMERATOR) };
}  // namespace mooncake::cluster

namespace mooncake::serve {
enum ServeMsg : uint16_t { MOONCAKE_SERVE_MESSAGES(MOONCAKE_MESSAGE_ENUMERATOR) };
}  // namespace mooncake::serve

namespace mooncake::store {
enum class StoreMsg : uint16_t { MOONCAKE_STORE_MESSAGES(MOONCAKE_MESSAGE_ENUMERATOR) };
enum class SsdMsg : uint16_t { MOONCAKE_SSD_MESSAGES(MOONCAKE_MESSAGE_ENUMERATOR) };
}  // namespace mooncake::store

namespace mooncake::p2p {
enum class P2pMsg : uint16_t { MOONCAKE_P2P_MESSAGES(MOONCAKE_MESSAGE_ENUMERATOR) };
}  // namespace mooncake::p2p

#undef MOONCAKE_MESSAGE_ENUMERATOR

namespace mooncake {

struct MessageIdEntry {
  uint16_t id = 0;
  std::string_view name;  // the enumerator, "kPutStart"
};

// A component's messages and the range its ids must lie in (ranges may nest: the membership's
// two ids lie inside the serving job's range, see above).
struct MessageComponent {
  std::string_view name;  // "store", as errors and logs name it
  uint16_t first = 0, last = 0;
  std::span<const MessageIdEntry> ids;
};

namespace message_ids {
#define MOONCAKE_MESSAGE_ENTRY(name, id) MessageIdEntry{id, #name},
inline constexpr MessageIdEntry kCheck[] = {MOONCAKE_CHECK_MESSAGES(MOONCAKE_MESSAGE_ENTRY)};
inline constexpr MessageIdEntry kMembership[] = {
    MOONCAKE_MEMBERSHIP_MESSAGES(MOONCAKE_MESSAGE_ENTRY)};
inline constexpr MessageIdEntry kServe[] = {MOONCAKE_SERVE_MESSAGES(MOONCAKE_MESSAGE_ENTRY)};
inline constexpr MessageIdEntry kStore[] = {MOONCAKE_STORE_MESSAGES(MOONCAKE_MESSAGE_ENTRY)};
inline constexpr MessageIdEntry kSsd[] = {MOONCAKE_SSD_MESSAGES(MOONCAKE_MESSAGE_ENTRY)};
inline constexpr MessageIdEntry kP2p[] = {MOONCAKE_P2P_MESSAGES(MOONCAKE_MESSAGE_ENTRY)};
#undef MOONCAKE_MESSAGE_ENTRY
}  // namespace message_ids

inline constexpr MessageComponent kMessageComponents[] = {
    {"job check", 0x0001, 0x00ff, message_ids::kCheck},
    {"membership", 0x0209, 0x020a, message_ids::kMembership},
    {"serving", 0x0200, 0x02ff, message_ids::kServe},
    {"store", 0x0400, 0x04ff, message_ids::kStore},
    {"store ssd", 0x0410, 0x041f, message_ids::kSsd},
    {"p2p", 0x0500, 0x05ff, message_ids::kP2p},
};

// True when no two messages of `components` share an id (0 is no message's id: the Rpc keeps it
// free for frames of no type).
constexpr bool MessageIdsAreUnique(std::span<const MessageComponent> components) {
  for (size_t a = 0; a < components.size(); ++a) {
    for (size_t i = 0; i < components[a].ids.size(); ++i) {
      const uint16_t id = components[a].ids[i].id;
      if (id == 0) return false;
      for (size_t b = a; b < components.size(); ++b) {
        for (size_t j = (b == a ? i + 1 : 0); j < components[b].ids.size(); ++j) {
          if (components[b].ids[j].id == id) return false;
        }
      }
    }
  }
  return true;
}

// True when every message's id lies in its component's range.
constexpr bool MessageIdsAreInRange(std::span<const MessageComponent> components) {
  for (const MessageComponent& c : components) {
    for (const MessageIdEntry& e : c.ids) {
      if (e.id < c.first || e.id > c.last) return false;
    }
  }
  return true;
}

static_assert(MessageIdsAreUnique(kMessageComponents),
              "two messages share an id: see the lists in common/message_ids.h");
static_assert(MessageIdsAreInRange(kMessageComponents),
              "a message id lies outside its component's range (common/message_ids.h)");

// Where a listed id belongs, for errors and logs: {"store", "kPutStart"}; both empty for an id
// of no list (tests and tools use their own).
struct MessageLookup {
  std::string_view component;
  std::string_view name;
};
constexpr MessageLookup LookupMessage(uint16_t id) {
  for (const MessageComponent& c : kMessageComponents) {
    for (const MessageIdEntry& e : c.ids) {
      if (e.id == id) return {c.name, e.name};
    }
  }
  return {};
}

}  // namespace mooncake
