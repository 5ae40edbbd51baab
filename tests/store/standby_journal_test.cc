// The journal between an active master and its standby over the RPC (issue 33, items 1 and 3):
// MasterService + JournalSender on rank 0, StandbyNode on another rank, a client putting and
// removing over the loopback transport. A put or remove is acknowledged only once the standby
// holds it; once the standby has taken over (fenced the old active), the old active
// acknowledges nothing more and learns that it was fenced, by which epoch.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>

#include "common/block_content.h"
#include "loopback_store.h"
#include "store/net/journal_sender.h"
#include "store/node/standby_node.h"

namespace mooncake::store {
namespace {

using testing::LoopbackStore;

std::vector<std::byte> Value(uint64_t id, size_t size) {
  std::vector<std::byte> v(size);
  FillBlockContent({id, 0, ModelTag("journal")}, v);
  return v;
}

struct Standby {
  explicit Standby(LoopbackStore& store)
      : rank(store.client_rank(1)), node(store.rpc(rank), Rank{0}, store.topology()) {
    node.Start();
    JournalConfig jc;
    jc.standby = Rank{rank};
    jc.send_timeout = std::chrono::milliseconds(500);
    jc.keepalive = std::chrono::milliseconds(20);
    journal = std::make_unique<JournalSender>(store.rpc(0), jc);
    journal->OnFenced([this](const Status& why) {
      fenced_why = why.ToString();
      fenced = true;
    });
    store.service().SetJournal(journal.get());
    journal->Start();
  }
  // The journal stops first; a keepalive it sent just before may still be delivered to the
  // node's handler, so the node outlives it by a moment.
  ~Standby() {
    journal->Stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  int rank;
  StandbyNode node;
  std::unique_ptr<JournalSender> journal;
  std::atomic<bool> fenced{false};
  std::string fenced_why;
};

TEST(StandbyJournal, PutsAndRemovesAreAcknowledgedOnlyOnceTheStandbyHasThem) {
  auto options = testing::Options(2, 2);
  LoopbackStore store(options);
  Standby standby(store);
  StoreClient& client = store.client(0);
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(client.Put("k" + std::to_string(i), Value(i, 1000 + i)).ok());
    // Acknowledged: so the standby applied it already, not "soon".
    EXPECT_EQ(standby.node.objects(), static_cast<size_t>(i + 1));
  }
  ASSERT_TRUE(client.Remove("k0").ok());
  EXPECT_EQ(standby.node.objects(), 29u);
  // The rebuilt master holds what the active holds, at the same places.
  StandbyTable table = standby.node.Promote(PeerFailure("test"));
  MetadataMaster rebuilt(MasterConfig{}, store.clock());
  ASSERT_TRUE(table.RestoreInto(rebuilt).ok());
  std::map<std::string, ObjectRecord> active;
  for (auto& r : store.service().WithMaster([](MetadataMaster& m) { return m.Records(); })) {
    active[r.key] = r;
  }
  auto records = rebuilt.Records();
  ASSERT_EQ(records.size(), active.size());
  for (const auto& r : records) {
    ASSERT_TRUE(active.count(r.key)) << r.key;
    EXPECT_EQ(r.replicas, active[r.key].replicas) << r.key;
    EXPECT_EQ(r.checksum, active[r.key].checksum) << r.key;
  }
  store.service().SetJournal(nullptr);
  standby.journal->Stop();
}

TEST(StandbyJournal, AFencedActiveAcknowledgesNothingAndLearnsTheEpoch) {
  auto options = testing::Options(2, 2);
  options.client.timeout = std::chrono::milliseconds(800);
  LoopbackStore store(options);
  Standby standby(store);
  StoreClient& client = store.client(0);
  ASSERT_TRUE(client.Put("before", Value(1, 4096)).ok());
  // The standby takes over: its Rpc fences the old active, as StoreServiceNode::TakeOver does.
  const std::string why =
      "fenced by epoch 2: rank " + std::to_string(standby.rank) + " took over as the conductor";
  store.rpc(standby.rank).MarkDead(Rank{0}, why);
  (void)standby.node.Promote(PeerFailure(why));
  // The keepalive alone tells the old active; a put is never acknowledged.
  const Status put = client.Put("after", Value(2, 4096));
  EXPECT_FALSE(put.ok());
  // The old active learns it on its journal's own thread, which may lag the put's timeout; the
  // reason is written before the flag, so it is read only once the flag is seen.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!standby.fenced.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(standby.fenced.load());
  EXPECT_NE(standby.fenced_why.find("fenced by epoch 2"), std::string::npos) << standby.fenced_why;
  EXPECT_EQ(standby.node.objects(), 1u);
  store.service().SetJournal(nullptr);
  standby.journal->Stop();
}

TEST(StandbyJournal, WithoutItsStandbyTheActiveGoesOnAlone) {
  LoopbackStore store(testing::Options(2, 2));
  Standby standby(store);
  ASSERT_TRUE(store.client(0).Put("one", Value(1, 100)).ok());
  // The standby is declared dead (the failure detector's verdict): puts go on unjournaled.
  store.rpc(0).MarkDead(Rank{standby.rank}, "no heartbeat for 1.00 s");
  ASSERT_TRUE(store.client(0).Put("two", Value(2, 100)).ok());
  EXPECT_FALSE(standby.journal->has_standby());
  EXPECT_FALSE(standby.fenced.load());
  store.service().SetJournal(nullptr);
  standby.journal->Stop();
}

}  // namespace
}  // namespace mooncake::store
