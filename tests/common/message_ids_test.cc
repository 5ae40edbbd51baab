// The one table of message ids (common/message_ids.h): its checks find a collision and an id
// outside its range, and the table itself passes them (also proven at compile time there).
#include "common/message_ids.h"

#include <gtest/gtest.h>

namespace mooncake {
namespace {

constexpr MessageIdEntry kA[] = {{0x0401, "kPutStart"}, {0x0402, "kPutEnd"}};
constexpr MessageIdEntry kB[] = {{0x0501, "kRegister"}, {0x0402, "kClash"}};
constexpr MessageIdEntry kSelfClash[] = {{0x0501, "kOne"}, {0x0501, "kTwo"}};

constexpr MessageComponent kClashing[] = {{"a", 0x0400, 0x04ff, kA}, {"b", 0x0400, 0x05ff, kB}};
constexpr MessageComponent kClashingWithin[] = {{"b", 0x0500, 0x05ff, kSelfClash}};
constexpr MessageComponent kOutOfRange[] = {{"a", 0x0400, 0x0401, kA}};
constexpr MessageComponent kFine[] = {{"a", 0x0400, 0x04ff, kA}};

static_assert(!MessageIdsAreUnique(kClashing), "a clash across components is found");
static_assert(!MessageIdsAreUnique(kClashingWithin), "a clash within a component is found");
static_assert(!MessageIdsAreInRange(kOutOfRange), "an id past its range is found");
static_assert(MessageIdsAreUnique(kFine) && MessageIdsAreInRange(kFine));

TEST(MessageIdsTest, TheTableHasNoCollisionAndEveryIdInItsRange) {
  EXPECT_TRUE(MessageIdsAreUnique(kMessageComponents));
  EXPECT_TRUE(MessageIdsAreInRange(kMessageComponents));
  EXPECT_FALSE(MessageIdsAreUnique(kClashing));
  EXPECT_FALSE(MessageIdsAreInRange(kOutOfRange));
}

TEST(MessageIdsTest, EveryComponentsEnumeratorsAreTheTablesIds) {
  EXPECT_EQ(static_cast<uint16_t>(store::StoreMsg::kPutStart), 0x0401);
  EXPECT_EQ(static_cast<uint16_t>(store::SsdMsg::kSpill), 0x0410);
  EXPECT_EQ(static_cast<uint16_t>(serve::kMsgKvOffer), 0x0203);
  EXPECT_EQ(static_cast<uint16_t>(cluster::kMsgHeartbeat), 0x0209);
  EXPECT_EQ(static_cast<uint16_t>(p2p::P2pMsg::kList), 0x0509);
  EXPECT_EQ(static_cast<uint16_t>(cluster::CheckMsg::kPing), 0x0001);
}

TEST(MessageIdsTest, LookupNamesAListedIdAndNothingElse) {
  const MessageLookup join = LookupMessage(0x0431);
  EXPECT_EQ(join.component, "store");
  EXPECT_EQ(join.name, "kJoin");
  EXPECT_EQ(LookupMessage(0x0503).component, "p2p");
  EXPECT_EQ(LookupMessage(0x0414).component, "store ssd");
  EXPECT_EQ(LookupMessage(0x020a).component, "membership");
  EXPECT_TRUE(LookupMessage(0x7e01).name.empty());
}

}  // namespace
}  // namespace mooncake
