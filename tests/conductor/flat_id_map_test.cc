#include "conductor/flat_id_map.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace mooncake::conductor {
namespace {

TEST(FlatIdMap, FindsInsertsAndErases) {
  FlatIdMap<int> m;
  EXPECT_EQ(m.Find(7), nullptr);
  bool inserted = false;
  m.FindOrInsert(7, &inserted) = 3;
  EXPECT_TRUE(inserted);
  m.FindOrInsert(7, &inserted) += 1;
  EXPECT_FALSE(inserted);
  ASSERT_NE(m.Find(7), nullptr);
  EXPECT_EQ(*m.Find(7), 4);
  EXPECT_TRUE(m.Erase(7));
  EXPECT_FALSE(m.Erase(7));
  EXPECT_TRUE(m.empty());
}

TEST(FlatIdMap, TheKeyThatMarksEmptySlotsIsAnOrdinaryKey) {
  FlatIdMap<int> m;
  const uint64_t max = ~uint64_t{0};
  m.FindOrInsert(max) = 5;
  m.FindOrInsert(0) = 6;
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(*m.Find(max), 5);
  int seen = 0;
  m.ForEach([&](uint64_t k, int v) { seen += (k == max && v == 5) + (k == 0 && v == 6); });
  EXPECT_EQ(seen, 2);
  EXPECT_TRUE(m.Erase(max));
  EXPECT_EQ(m.Find(max), nullptr);
  EXPECT_EQ(*m.Find(0), 6);
}

// Against std::unordered_map under random inserts and erases, with keys drawn from a small
// range (long probe runs, erases in the middle of them) and from the whole 64-bit range.
TEST(FlatIdMap, AgreesWithUnorderedMapUnderRandomInsertsAndErases) {
  for (uint64_t range : {uint64_t{64}, uint64_t{5000}, ~uint64_t{0}}) {
    std::mt19937_64 rng(range);
    FlatIdMap<uint64_t> m;
    std::unordered_map<uint64_t, uint64_t> ref;
    for (int step = 0; step < 200000; ++step) {
      const uint64_t key =
          range == ~uint64_t{0} ? rng() % 3000 * 0x9E3779B97F4A7C15ULL : rng() % range;
      if (rng() % 3 == 0) {
        EXPECT_EQ(m.Erase(key), ref.erase(key) == 1) << key;
      } else {
        m.FindOrInsert(key) = step;
        ref[key] = step;
      }
      if (step % 997 == 0) {
        ASSERT_EQ(m.size(), ref.size());
        for (const auto& [k, v] : ref) {
          const uint64_t* got = m.Find(k);
          ASSERT_NE(got, nullptr) << k;
          ASSERT_EQ(*got, v) << k;
        }
      }
    }
    size_t n = 0;
    m.ForEach([&](uint64_t k, uint64_t v) {
      ++n;
      EXPECT_EQ(ref.at(k), v);
    });
    EXPECT_EQ(n, ref.size());
  }
}

}  // namespace
}  // namespace mooncake::conductor
