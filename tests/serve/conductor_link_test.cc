// ConductorLink (serve/conductor_link.h): a prefill or decode rank's reports and calls reach the
// standby conductor that took over, over the loopback transport (three ranks: the old
// conductor, the new one, a worker).
#include "serve/conductor_link.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "transport/loopback/loopback_transport.h"

namespace mooncake::serve {
namespace {

constexpr uint16_t kReport = 0x7701, kAsk = 0x7702;
constexpr int kOld = 0, kNew = 1, kWorker = 2;

class ConductorLinkTest : public ::testing::Test {
 protected:
  ConductorLinkTest() {
    transports_ = transport::CreateLoopbackCluster(3, &hub_);
    for (auto& t : transports_) rpcs_.push_back(std::make_unique<transport::Rpc>(*t));
    for (int r : {kOld, kNew}) {
      rpcs_[r]->Register(kReport, [this, r](Rank, std::span<const std::byte>,
                                            transport::Responder) { ++reports_[r]; });
      rpcs_[r]->Register(kAsk, [r](Rank, std::span<const std::byte>, transport::Responder resp) {
        if (r == kOld) return resp.Fail(Status(ErrorCode::kInternal, "the old one is going"));
        const std::byte yes{1};
        resp.Reply(std::span<const std::byte>(&yes, 1));
      });
    }
  }
  ~ConductorLinkTest() override {
    for (auto& r : rpcs_) r->Stop();
  }
  ConductorLinkConfig Config(bool standby) {
    return ConductorLinkConfig{Rank{kOld}, standby, std::chrono::seconds(5),
                               std::chrono::seconds(5)};
  }
  // Waits until rank `r` counted `n` reports (at most 5 s).
  bool Reports(int r, int n) {
    for (int i = 0; i < 500 && reports_[r].load() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return reports_[r].load() == n;
  }

  std::shared_ptr<transport::LoopbackHub> hub_;
  std::vector<std::unique_ptr<transport::Transport>> transports_;
  std::vector<std::unique_ptr<transport::Rpc>> rpcs_;
  std::atomic<int> reports_[2] = {0, 0};
};

TEST_F(ConductorLinkTest, ReportsAreSentAgainToTheConductorThatTookOver) {
  ConductorLink link(*rpcs_[kWorker], Config(/*standby=*/true));
  EXPECT_TRUE(link.Notify(kReport, {std::byte{1}}).ok());
  EXPECT_TRUE(link.Notify(kReport, {std::byte{2}}).ok());
  EXPECT_TRUE(Reports(kOld, 2));
  link.SwitchTo(Rank{kNew});
  EXPECT_EQ(link.conductor(), Rank{kNew});
  EXPECT_TRUE(Reports(kNew, 2));  // both kept reports, again
  EXPECT_EQ(link.resent(), 2u);
  EXPECT_TRUE(link.Notify(kReport, {std::byte{3}}).ok());
  EXPECT_TRUE(Reports(kNew, 3));
  link.SwitchTo(Rank{kNew});  // the same conductor again: nothing is resent
  EXPECT_EQ(link.resent(), 2u);
}

TEST_F(ConductorLinkTest, WithoutAStandbyNothingIsKept) {
  ConductorLink link(*rpcs_[kWorker], Config(/*standby=*/false));
  EXPECT_TRUE(link.Notify(kReport, {std::byte{1}}).ok());
  EXPECT_TRUE(Reports(kOld, 1));
  link.SwitchTo(Rank{kNew});
  EXPECT_EQ(link.resent(), 0u);
}

TEST_F(ConductorLinkTest, AFailedCallIsAskedAgainOfTheNewConductor) {
  ConductorLink link(*rpcs_[kWorker], Config(/*standby=*/true));
  std::thread takeover([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    link.SwitchTo(Rank{kNew});
  });
  auto r = link.Call(kAsk, {}, std::chrono::seconds(1));
  takeover.join();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->size(), 1u);
}

TEST_F(ConductorLinkTest, WithoutAStandbyAFailedCallFails) {
  ConductorLink link(*rpcs_[kWorker], Config(/*standby=*/false));
  EXPECT_FALSE(link.Call(kAsk, {}, std::chrono::seconds(1)).ok());
}

}  // namespace
}  // namespace mooncake::serve
