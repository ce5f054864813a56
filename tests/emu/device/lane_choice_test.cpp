// LaneChoice (emu/device/lane_choice.h): each way run three times per job (the first not
// counted), then the faster by the median of its last three, the other tried again every
// kProbeEvery runs; one slow run does not flip the choice; jobs apart; a changed machine
// followed.
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
  const std::vector<bool> first = run(c, 7, 6, 1000, 2000);
  EXPECT_EQ(first, (std::vector<bool>{true, false, true, false, true, false}));
  const std::vector<bool> next = run(c, 7, LaneChoice::kProbeEvery - 1, 1000, 2000);
  for (bool lanes : next) EXPECT_TRUE(lanes);
  EXPECT_FALSE(run(c, 7, 1, 1000, 2000)[0]) << "the other way is tried again";
  EXPECT_TRUE(run(c, 7, 1, 1000, 2000)[0]);
}

TEST(LaneChoice, OneThreadWinsWhenTheLanesAreSlower) {
  LaneChoice c;
  run(c, 1, 6, 3000, 1000);
  const std::vector<bool> next = run(c, 1, LaneChoice::kProbeEvery - 1, 3000, 1000);
  for (bool lanes : next) EXPECT_FALSE(lanes);
  EXPECT_TRUE(run(c, 1, 1, 3000, 1000)[0]) << "the lanes are tried again";
}

TEST(LaneChoice, FollowsAMachineWhoseLoadChanges) {
  LaneChoice c;
  run(c, 1, 6, 1000, 2000);  // lanes faster
  // The second core gets busy: the lanes now take 4000 ns. The probes of one thread (2000)
  // and the lanes' own slower runs move the averages until one thread wins.
  const std::vector<bool> ways = run(c, 1, 4 * LaneChoice::kProbeEvery, 4000, 2000);
  int tail_lanes = 0;  // the last kProbeEvery runs: one thread, but for one probe
  for (size_t i = ways.size() - LaneChoice::kProbeEvery; i < ways.size(); ++i)
    tail_lanes += ways[i];
  EXPECT_EQ(tail_lanes, 1);
}

TEST(LaneChoice, KeepsJobsApartAndForgetsTheLeastRecentlyUsed) {
  LaneChoice c;
  run(c, 1, 6, 1000, 2000);  // job 1: lanes
  run(c, 2, 6, 2000, 1000);  // job 2: one thread
  EXPECT_TRUE(run(c, 1, 1, 1000, 2000)[0]);
  EXPECT_FALSE(run(c, 2, 1, 2000, 1000)[0]);
  for (uint64_t k = 10; k < 10 + LaneChoice::kJobs; ++k) run(c, k, 1, 1, 1);  // evicts 1 and 2
  EXPECT_EQ(run(c, 2, 6, 2000, 1000), (std::vector<bool>{true, false, true, false, true, false}));
}

// A cold first run of each way and then one slow run of the lanes (a neighbour took the second
// core once) do not make one thread the choice.
TEST(LaneChoice, OneSlowRunDoesNotFlipTheChoice) {
  LaneChoice c;
  const uint64_t lanes_ns[] = {9000, 1000, 1000}, serial_ns[] = {9000, 2000, 2000};
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(c.lanes(3));
    c.ran(3, true, lanes_ns[i]);
    ASSERT_FALSE(c.lanes(3));
    c.ran(3, false, serial_ns[i]);
  }
  ASSERT_TRUE(c.lanes(3));
  c.ran(3, true, 5000);
  EXPECT_TRUE(c.lanes(3));
}

}  // namespace
}  // namespace npu::emu
