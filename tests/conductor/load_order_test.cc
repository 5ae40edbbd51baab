#include "conductor/load_order.h"

#include <gtest/gtest.h>

#include <vector>

namespace mooncake::conductor {
namespace {

std::vector<int> Walked(const OrderSet& s, int rotate) {
  std::vector<int> ids;
  WalkRotated(s, rotate, [&](const OrderKey& k) {
    ids.push_back(k.id);
    return true;
  });
  return ids;
}

TEST(LoadOrder, EqualKeysComeInRotatedIdOrder) {
  OrderSet s;
  for (int id : {0, 1, 2, 3, 4}) s.insert(OrderKey{id == 2 ? 5 : 0, 0, id});
  // Key 0: ids 0, 1, 3, 4 from rotation 3 on (3, 4, 0, 1); then key 5: id 2.
  EXPECT_EQ(Walked(s, 3), (std::vector<int>{3, 4, 0, 1, 2}));
  EXPECT_EQ(Walked(s, 0), (std::vector<int>{0, 1, 3, 4, 2}));
  EXPECT_EQ(Walked(s, 9), (std::vector<int>{0, 1, 3, 4, 2}));
}

std::vector<int> Walked(const PrefillLoadOrder& o, int rotate) {
  std::vector<int> ids;
  o.Walk(rotate, [&](int i) {
    ids.push_back(i);
    return true;
  });
  return ids;
}

TEST(LoadOrder, DrainedInstancesAreIdleAndOrderedByTieOnly) {
  PrefillLoadOrder o(4, 8);
  ASSERT_TRUE(o.AdvanceTo(Nanos(100)));
  o.Update(0, Nanos(500), 1);  // busy until 500
  o.Update(1, Nanos(300), 2);  // busy until 300
  o.Update(2, Nanos(50), 1);   // drained: idle, tie 1
  o.Update(3, Nanos(0), 0);    // drained: idle, tie 0
  EXPECT_EQ(Walked(o, 0), (std::vector<int>{3, 2, 1, 0}));
  // At 400, instance 1 has drained too: idle with tie 2, after the idle ties 0 and 1.
  ASSERT_TRUE(o.AdvanceTo(Nanos(400)));
  EXPECT_EQ(Walked(o, 0), (std::vector<int>{3, 2, 1, 0}));
  ASSERT_TRUE(o.AdvanceTo(Nanos(600)));
  o.Update(1, Nanos(600), 1);  // drains exactly now: idle
  EXPECT_EQ(Walked(o, 2), (std::vector<int>{3, 2, 0, 1}));
  // A decision before the watermark cannot be answered from the order.
  EXPECT_FALSE(o.AdvanceTo(Nanos(599)));
  o.Remove(2);
  EXPECT_EQ(Walked(o, 0), (std::vector<int>{3, 0, 1}));
}

TEST(LoadOrder, HotBlocksKeepAnOrderOfTheirLiveHolders) {
  PrefillLoadOrder o(6, 2);  // hot above 2 holders, cool again at 1
  ASSERT_TRUE(o.AdvanceTo(Nanos(0)));
  for (int i = 0; i < 6; ++i) o.Update(i, Nanos(10 * (6 - i)), 0);
  const BlockHash b{42};
  std::vector<int32_t> holders;
  auto add = [&](int i) {
    holders.insert(std::lower_bound(holders.begin(), holders.end(), i), i);
    o.OnHolderAdded(b, i, holders);
  };
  auto remove = [&](int i) {
    holders.erase(std::find(holders.begin(), holders.end(), i));
    o.OnHolderRemoved(b, i, holders);
  };
  add(1);
  add(4);
  EXPECT_FALSE(o.WalkHolders(b, 0, [](int) { return true; }));  // two holders: not hot
  add(2);
  std::vector<int> ids;
  auto collect = [&](int i) {
    ids.push_back(i);
    return true;
  };
  ASSERT_TRUE(o.WalkHolders(b, 0, collect));
  EXPECT_EQ(ids, (std::vector<int>{4, 2, 1}));  // least loaded first
  o.Update(4, Nanos(100), 0);                   // a queue change moves it in every order
  o.Remove(2);                                  // dead: leaves every order
  ids.clear();
  ASSERT_TRUE(o.WalkHolders(b, 0, collect));
  EXPECT_EQ(ids, (std::vector<int>{1, 4}));
  remove(4);
  ASSERT_TRUE(o.WalkHolders(b, 0, [](int) { return true; }));  // two left (one dead): still hot
  remove(1);
  EXPECT_FALSE(o.WalkHolders(b, 0, [](int) { return true; }));  // one: cooled down
  EXPECT_EQ(o.hot_blocks(), 0u);
}

}  // namespace
}  // namespace mooncake::conductor
