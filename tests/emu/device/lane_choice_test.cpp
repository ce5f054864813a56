// LaneChoice (emu/device/lane_choice.h): a job's first run on the lanes (not counted), then one
// thread once and the lanes twice, then the faster by the median of its last three, the other tried
// again after kProbeEvery runs, then after twice as many each time it is still slower (up to
// kProbeMax); one slow run does not flip the choice; jobs apart; a changed machine followed.
#include <gtest/gtest.h>

#include <vector>

#include "lane_choice.h"

namespace npu::emu {
namespace {

/// Runs job `key` `n` times on `choice` with the given host times; returns the ways taken.
std::vector<bool> run(LaneChoice& choice, uint64_t key, int n, uint64_t lanes_ns,
                      uint64_t serial_ns) {
  std::vector<bool> ways;
  for (int i = 0; i < n; ++i) {
    const bool lanes = choice.lanes(key);
    choice.ran(key, lanes, lanes ? lanes_ns : serial_ns);
    ways.push_back(lanes);
  }
  return ways;
}

TEST(LaneChoice, MeasuresBothWaysThenTakesTheFaster) {
  LaneChoice c;
  const std::vector<bool> first = run(c, 7, 4, 1000, 2000);
  EXPECT_EQ(first, (std::vector<bool>{true, false, true, true}))
      << "one thread is tried once, second, so that a warm-up of two covers it";
  // The first runs count as a probe that confirmed the choice: the next one comes after
  // twice kProbeEvery runs.
  const std::vector<bool> next = run(c, 7, 2 * LaneChoice::kProbeEvery - 1, 1000, 2000);
  for (bool lanes : next) EXPECT_TRUE(lanes);
  EXPECT_FALSE(run(c, 7, 1, 1000, 2000)[0]) << "the other way is tried again";
  EXPECT_TRUE(run(c, 7, 1, 1000, 2000)[0]);
}

TEST(LaneChoice, OneThreadWinsWhenTheLanesAreSlower) {
  LaneChoice c;
  run(c, 1, 4, 3000, 1000);
  const std::vector<bool> next = run(c, 1, 2 * LaneChoice::kProbeEvery - 1, 3000, 1000);
  for (bool lanes : next) EXPECT_FALSE(lanes);
  EXPECT_TRUE(run(c, 1, 1, 3000, 1000)[0]) << "the lanes are tried again";
}

TEST(LaneChoice, FollowsAMachineWhoseLoadChanges) {
  LaneChoice c;
  run(c, 1, 4, 1000, 2000);  // lanes faster
  // The second core gets busy: the lanes now take 4000 ns. The probes of one thread (2000)
  // and the lanes' own slower runs move the averages until one thread wins.
  const std::vector<bool> ways = run(c, 1, 4 * LaneChoice::kProbeEvery, 4000, 2000);
  int tail_lanes = 0;  // the last kProbeEvery runs: one thread, but for one probe
  for (size_t i = ways.size() - LaneChoice::kProbeEvery; i < ways.size(); ++i)
    tail_lanes += ways[i];
  EXPECT_EQ(tail_lanes, 1);
}

/// The runs (counted from 0) on which `ways` took the way other than `usual`.
std::vector<int> probes(const std::vector<bool>& ways, bool usual) {
  std::vector<int> at;
  for (size_t i = 0; i < ways.size(); ++i)
    if (ways[i] != usual) at.push_back(static_cast<int>(i));
  return at;
}

// While the lanes stay the faster way, each probe of one thread that confirms it doubles the
// runs to the next (16 after the first runs, then 32, then 64 at most); once the lanes turn slower,
// the choice changes and the probes come every 8 runs again.
TEST(LaneChoice, ProbesBackOffWhileTheChoiceHolds) {
  static_assert(LaneChoice::kProbeEvery == 8 && LaneChoice::kProbeMax == 64);
  LaneChoice c;
  run(c, 5, 4, 1000, 2000);
  EXPECT_EQ(probes(run(c, 5, 240, 1000, 2000), true),
            (std::vector<int>{15, 15 + 32, 15 + 32 + 64, 15 + 32 + 64 * 2, 15 + 32 + 64 * 3}));
  // The second core gets busy: the lanes' own runs (4000 ns) make one thread the choice after
  // two of them (their median of three), and one thread is then probed every 8 runs.
  const std::vector<bool> ways = run(c, 5, 2 + 24, 4000, 2000);
  EXPECT_TRUE(ways[0] && ways[1]);
  EXPECT_EQ(probes(std::vector<bool>(ways.begin() + 2, ways.end()), false),
            (std::vector<int>{7, 7 + 16}));
}

TEST(LaneChoice, KeepsJobsApartAndForgetsTheLeastRecentlyUsed) {
  LaneChoice c;
  run(c, 1, 4, 1000, 2000);  // job 1: lanes
  run(c, 2, 4, 2000, 1000);  // job 2: one thread
  EXPECT_TRUE(run(c, 1, 1, 1000, 2000)[0]);
  EXPECT_FALSE(run(c, 2, 1, 2000, 1000)[0]);
  for (uint64_t k = 10; k < 10 + LaneChoice::kJobs; ++k) run(c, k, 1, 1, 1);  // evicts 1 and 2
  EXPECT_EQ(run(c, 2, 4, 2000, 1000), (std::vector<bool>{true, false, true, true}));
}

// A cold first run and then one slow run of the lanes (a neighbour took the second core once)
// do not make one thread the choice: of two counted times the lower counts.
TEST(LaneChoice, OneSlowRunDoesNotFlipTheChoice) {
  LaneChoice c;
  const bool ways[] = {true, false, true, true};
  const uint64_t ns[] = {9000, 2000, 1000, 5000};
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(c.lanes(3), ways[i]) << "run " << i;
    c.ran(3, ways[i], ns[i]);
  }
  EXPECT_TRUE(c.lanes(3));
}

// The cold first run is not counted: had it been, the lanes' median of three (9000, 1000,
// 3000) would have been 3000 ns, more than a fifth above one thread's 2000.
TEST(LaneChoice, TheColdFirstRunIsNotCounted) {
  LaneChoice c;
  const uint64_t ns[] = {9000, 2000, 1000, 3000};
  for (uint64_t t : ns) {
    const bool lanes = c.lanes(4);
    c.ran(4, lanes, t);
  }
  EXPECT_TRUE(c.lanes(4));
}

}  // namespace
}  // namespace npu::emu
