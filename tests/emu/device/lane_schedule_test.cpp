// The lanes' schedules (emu/device/lane_schedule.h): the conflicts it finds order every
// conflicting pair of commands (with SRAM renamed, only the reads of SRAM and DRAM); in the list
// schedule and in a schedule of lanes fixed beforehand every command runs once after
// everything it conflicts with and the two lanes never wait on each other in a cycle; the
// longest chain of work goes first; and the split by weights keeps each slice on one lane.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "lane_schedule.h"

namespace npu::emu::testing {
namespace {

struct ConflictProgram {
  std::vector<LaneCommand> cmds;
  std::vector<LaneRegion> regions;
  void add(uint64_t cost, std::initializer_list<LaneRegion> rs) {
    LaneCommand c;
    c.first = static_cast<uint32_t>(regions.size());
    c.count = static_cast<uint32_t>(rs.size());
    c.cost = cost;
    regions.insert(regions.end(), rs);
    cmds.push_back(c);
  }
};

/// Commands of 1-4 regions in 4 KiB of SRAM and 4 KiB of "DRAM", small ranges so that many
/// overlap, costs of 20-200 us.
ConflictProgram random_conflict_program(std::mt19937& rng, uint32_t n) {
  ConflictProgram p;
  for (uint32_t i = 0; i < n; ++i) {
    LaneCommand c;
    c.first = static_cast<uint32_t>(p.regions.size());
    c.count = 1 + rng() % 4;
    c.cost = 20'000 + rng() % 180'000;
    for (uint32_t r = 0; r < c.count; ++r) {
      LaneRegion g;
      g.sram = rng() % 3 != 0;
      const uint64_t len = 1 + rng() % 600;
      g.begin = rng() % (4096 - len);
      g.end = g.begin + len;
      g.write = rng() % 2 == 0;
      p.regions.push_back(g);
    }
    p.cmds.push_back(c);
  }
  return p;
}

/// Whether byte x is one of region r's (its rows, when it has them).
bool holds(const LaneRegion& r, uint64_t x) {
  return x >= r.begin && x < r.end && (r.pitch == 0 || (x - r.begin) % r.pitch < r.width);
}

bool conflicts(const ConflictProgram& p, uint32_t a, uint32_t b) {
  for (uint32_t x = p.cmds[a].first; x < p.cmds[a].first + p.cmds[a].count; ++x)
    for (uint32_t y = p.cmds[b].first; y < p.cmds[b].first + p.cmds[b].count; ++y) {
      const LaneRegion& u = p.regions[x];
      const LaneRegion& v = p.regions[y];
      if (u.sram != v.sram || !(u.write || v.write) || u.end <= v.begin || v.end <= u.begin)
        continue;
      for (uint64_t z = std::max(u.begin, v.begin); z < std::min(u.end, v.end); ++z)
        if (holds(u, z) && holds(v, z)) return true;
    }
  return false;
}

/// Start and end of each command when lane l runs its order, each command after its lane's
/// previous one and after the other lane's first wait commands.
std::vector<uint64_t> lane_ends(const LaneSchedule& s, const ConflictProgram& p) {
  std::vector<uint64_t> end(p.cmds.size(), 0);
  size_t done[2] = {0, 0};
  uint64_t free_at[2] = {0, 0};
  std::vector<uint64_t> lane_end[2];
  for (bool progress = true; progress;) {
    progress = false;
    for (int l = 0; l < 2; ++l)
      while (done[l] < s.order[l].size() && s.wait[l][done[l]] <= done[1 - l]) {
        const uint32_t w = s.wait[l][done[l]];
        const uint64_t start = std::max(free_at[l], w == 0 ? 0 : lane_end[1 - l][w - 1]);
        const uint32_t i = s.order[l][done[l]];
        end[i] = free_at[l] = start + p.cmds[i].cost;
        lane_end[l].push_back(end[i]);
        ++done[l];
        progress = true;
      }
  }
  EXPECT_EQ(done[0], s.order[0].size()) << "the lanes wait on each other";
  EXPECT_EQ(done[1], s.order[1].size()) << "the lanes wait on each other";
  return end;
}

/// Every pair of conflicting commands j < i has j in before[i] (j ends before i starts).
void expect_every_conflict_ordered(const ConflictProgram& p,
                                   const std::vector<std::vector<bool>>& before, uint32_t round) {
  for (uint32_t i = 0; i < p.cmds.size(); ++i)
    for (uint32_t j = 0; j < i; ++j) {
      if (conflicts(p, i, j)) {
        EXPECT_TRUE(before[i][j]) << "round " << round << ": " << i << " may start before " << j
                                  << " ends";
      }
    }
}

/// reach[i][j]: j is ordered before i by the conflicts `g` (transitively); every conflict
/// points to an earlier command.
std::vector<std::vector<bool>> ordered_before(const LaneConflicts& g, uint32_t n) {
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (uint32_t i = 0; i < n; ++i)
    for (uint32_t k = g.first[i]; k < g.first[i + 1]; ++k) {
      const uint32_t j = g.preds[k];
      EXPECT_LT(j, i);
      if (j >= i) continue;
      reach[i][j] = true;
      for (uint32_t x = 0; x < j; ++x)
        if (reach[j][x]) reach[i][x] = true;
    }
  return reach;
}

TEST(LaneSchedule, ConflictsOrderEveryConflictingPairAndNoOther) {
  std::mt19937 rng(11);
  for (uint32_t round = 0; round < 30; ++round) {
    const ConflictProgram p = random_conflict_program(rng, 40 + round * 8);
    const LaneConflicts g = lane_conflicts(p.cmds, p.regions);
    const auto n = static_cast<uint32_t>(p.cmds.size());
    ASSERT_EQ(g.first.size(), n + 1);
    for (uint32_t i = 0; i < n; ++i)
      for (uint32_t k = g.first[i]; k < g.first[i + 1]; ++k)
        EXPECT_TRUE(conflicts(p, i, g.preds[k]))
            << "round " << round << ": " << i << " after " << g.preds[k];
    const std::vector<std::vector<bool>> reach = ordered_before(g, n);
    expect_every_conflict_ordered(p, reach, round);
  }
}

/// Every command of `p` is in one lane's order of `s` and runs after every earlier command it
/// conflicts with, and the lanes never wait on each other in a cycle.
void expect_sound(const ConflictProgram& p, const LaneSchedule& s, uint32_t round) {
  const auto n = static_cast<uint32_t>(p.cmds.size());
  std::vector<int> lane(n, -1);
  for (int l = 0; l < 2; ++l) {
    ASSERT_EQ(s.order[l].size(), s.wait[l].size());
    for (uint32_t k = 0; k < s.order[l].size(); ++k) {
      const uint32_t i = s.order[l][k];
      ASSERT_LT(i, n);
      ASSERT_EQ(lane[i], -1) << "command " << i << " scheduled twice";
      lane[i] = l;
    }
  }
  // before[i]: the commands that have completed whenever i starts: its lane's earlier ones
  // and the other lane's first wait[i], with what those waited for. In an order that
  // runs (lane_ends() checks that the lanes never wait on each other in a cycle).
  std::vector<std::vector<bool>> before(n, std::vector<bool>(n, false));
  size_t done[2] = {0, 0};
  for (bool progress = true; progress;) {
    progress = false;
    for (int l = 0; l < 2; ++l)
      while (done[l] < s.order[l].size() && s.wait[l][done[l]] <= done[1 - l]) {
        const uint32_t i = s.order[l][done[l]];
        auto take = [&](uint32_t j) {
          before[i][j] = true;
          for (uint32_t x = 0; x < n; ++x)
            if (before[j][x]) before[i][x] = true;
        };
        if (done[l] > 0) take(s.order[l][done[l] - 1]);
        if (s.wait[l][done[l]] > 0) take(s.order[1 - l][s.wait[l][done[l]] - 1]);
        ++done[l];
        progress = true;
      }
  }
  for (uint32_t i = 0; i < n; ++i) ASSERT_NE(lane[i], -1) << "command " << i << " not scheduled";
  expect_every_conflict_ordered(p, before, round);
  const std::vector<uint64_t> end = lane_ends(s, p);  // and the lanes never wait in a cycle
  (void)end;
}

TEST(LaneSchedule, EveryCommandRunsOnceAfterEverythingItConflictsWith) {
  std::mt19937 rng(5);
  for (uint32_t round = 0; round < 30; ++round) {
    const ConflictProgram p = random_conflict_program(rng, 30 + round * 10);
    expect_sound(p, schedule_lanes(p.cmds, p.regions), round);
  }
}

TEST(LaneSchedule, FixedLanesRunEveryCommandOnceAfterEverythingItConflictsWith) {
  std::mt19937 rng(8);
  for (uint32_t round = 0; round < 30; ++round) {
    const ConflictProgram p = random_conflict_program(rng, 30 + round * 10);
    std::vector<uint8_t> lane_of(p.cmds.size());
    for (uint8_t& l : lane_of) l = static_cast<uint8_t>(rng() % 2);
    const LaneSchedule s = schedule_fixed_lanes(p.cmds, p.regions, lane_of);
    expect_sound(p, s, round);
    for (int l = 0; l < 2; ++l) {  // each lane in the commands' order
      EXPECT_TRUE(std::is_sorted(s.order[l].begin(), s.order[l].end()));
      for (const uint32_t i : s.order[l]) EXPECT_EQ(lane_of[i], l);
    }
  }
}

TEST(LaneSchedule, RenamedSramLeavesOnlyTheReadsOfWhatWasWritten) {
  ConflictProgram p;
  p.add(1, {{0, 64, true, true}});                           // 0 writes A
  p.add(1, {{0, 64, true, false}, {64, 128, true, true}});   // 1 reads A, writes B
  p.add(1, {{0, 64, true, true}});                           // 2 writes A again
  p.add(1, {{64, 128, true, false}, {0, 64, false, true}});  // 3 reads B, writes DRAM
  p.add(1, {{0, 64, false, true}});                          // 4 writes the same DRAM
  const LaneConflicts all = lane_conflicts(p.cmds, p.regions);
  const LaneConflicts renamed = lane_conflicts(p.cmds, p.regions, true);
  auto preds = [](const LaneConflicts& g, uint32_t i) {
    return std::vector<uint32_t>(g.preds.begin() + g.first[i], g.preds.begin() + g.first[i + 1]);
  };
  EXPECT_EQ(preds(all, 2), (std::vector<uint32_t>{0, 1}));  // after the write and the read
  EXPECT_TRUE(preds(renamed, 2).empty());
  EXPECT_EQ(preds(renamed, 1), (std::vector<uint32_t>{0}));
  EXPECT_EQ(preds(renamed, 3), (std::vector<uint32_t>{1}));
  EXPECT_EQ(preds(renamed, 4), (std::vector<uint32_t>{3}));  // DRAM stays whole
}

TEST(LaneSchedule, SplitKeepsEachLoadOfWeightsWithEveryMatrixCommandThatReadsIt) {
  // A compiler's slices: per slice a load of weights (two slots in turn), then per row band a
  // load of the band (two slots in turn), the convolution, and the store of its output.
  ConflictProgram p;
  std::vector<uint32_t> slice_of;
  auto add = [&](uint32_t slice, LaneRole role, int32_t weights, uint64_t cost,
                 std::initializer_list<LaneRegion> rs) {
    p.add(cost, rs);
    p.cmds.back().role = role;
    p.cmds.back().weights = weights;
    slice_of.push_back(slice);
  };
  constexpr uint64_t kW[2] = {0, 4096}, kIn[2] = {8192, 12288}, kOut = 16384;
  uint32_t band_slot = 0;
  for (uint32_t s = 0; s < 6; ++s) {
    const uint64_t w = kW[s % 2];
    add(s, LaneRole::Load, -1, 10'000,
        {{1 << 20, (1 << 20) + 4096, false, false}, {w, w + 4096, true, true}});
    for (uint64_t band = 0; band < 3; ++band, band_slot ^= 1) {
      const uint64_t in = kIn[band_slot], dram_out = (2 << 20) + (s * 3 + band) * 64;
      add(s, LaneRole::Load, -1, 10'000,
          {{3 << 20, (3 << 20) + 4096, false, false}, {in, in + 4096, true, true}});
      add(s, LaneRole::Compute, 1, 100'000,
          {{in, in + 4096, true, false},
           {w, w + 4096, true, false},
           {kOut, kOut + 64, true, true}});
      add(s, LaneRole::Store, -1, 5'000,
          {{kOut, kOut + 64, true, false}, {dram_out, dram_out + 64, false, true}});
    }
  }
  const std::vector<uint8_t> lane = split_lanes(p.cmds, p.regions);
  ASSERT_EQ(lane.size(), p.cmds.size());
  uint32_t per_lane[2] = {0, 0};
  for (uint32_t s = 0; s < 6; ++s) {
    int slice_lane = -1;
    for (uint32_t i = 0; i < p.cmds.size(); ++i) {
      if (slice_of[i] != s) continue;
      if (slice_lane < 0) slice_lane = lane[i];
      EXPECT_EQ(lane[i], slice_lane) << "slice " << s << " command " << i;
    }
    ++per_lane[slice_lane];
  }
  EXPECT_EQ(per_lane[0], 3u);  // the slices shared out
  EXPECT_EQ(per_lane[1], 3u);
}

/// Random programs whose DRAM regions are often rows of one pitch (a DMA's strided side).
ConflictProgram random_rows_program(std::mt19937& rng, uint32_t n) {
  ConflictProgram p = random_conflict_program(rng, n);
  for (LaneRegion& r : p.regions) {
    if (r.sram || rng() % 3 == 0) continue;
    r.pitch = 256;
    r.width = 32 << (rng() % 2);
    r.begin = rng() % 512;
    r.end = r.begin + (1 + rng() % 8) * 256 - (256 - r.width);
  }
  return p;
}

TEST(LaneSchedule, RowsAreOrderedWhereTheirBytesMeet) {
  std::mt19937 rng(21);
  for (uint32_t round = 0; round < 30; ++round) {
    const ConflictProgram p = random_rows_program(rng, 30 + round * 10);
    const auto n = static_cast<uint32_t>(p.cmds.size());
    expect_every_conflict_ordered(p, ordered_before(lane_conflicts(p.cmds, p.regions), n), round);
    expect_sound(p, schedule_lanes(p.cmds, p.regions), round);
    std::vector<uint8_t> lane_of(n);
    for (uint8_t& l : lane_of) l = static_cast<uint8_t>(rng() % 2);
    expect_sound(p, schedule_fixed_lanes(p.cmds, p.regions, lane_of), round);
  }
}

TEST(LaneSchedule, RowsThatNeverMeetDoNotWaitForEachOther) {
  // Four slices of 64 bytes of each 256-byte row stored one after another, a read of the whole
  // rows, the four stored again, then one more store of the second slice.
  auto rows = [](uint64_t offset) {
    return LaneRegion{offset, offset + 3 * 256 + 64, false, true, 256, 64};
  };
  ConflictProgram p;
  for (uint64_t s = 0; s < 4; ++s) p.add(1, {rows(s * 64)});  // 0-3
  p.add(1, {{0, 4 * 256, false, false}});                     // 4
  for (uint64_t s = 0; s < 4; ++s) p.add(1, {rows(s * 64)});  // 5-8
  p.add(1, {rows(64)});                                       // 9
  const LaneConflicts g = lane_conflicts(p.cmds, p.regions);
  auto preds = [&](uint32_t i) {
    return std::vector<uint32_t>(g.preds.begin() + g.first[i], g.preds.begin() + g.first[i + 1]);
  };
  for (uint32_t s = 0; s < 4; ++s) EXPECT_TRUE(preds(s).empty()) << s;
  EXPECT_EQ(preds(4), (std::vector<uint32_t>{0, 1, 2, 3}));
  for (uint32_t s = 0; s < 4; ++s) EXPECT_EQ(preds(5 + s), (std::vector<uint32_t>{s, 4})) << s;
  // The rows written since the read cover every byte: the read has nothing left to order.
  EXPECT_EQ(preds(9), (std::vector<uint32_t>{6}));
}

TEST(LaneSchedule, IndependentChainsStayOnTheirLanes) {
  // Two tile chains through their own SRAM slots, interleaved as a compiler emits them.
  ConflictProgram p;
  for (uint64_t t = 0; t < 20; ++t) {
    p.add(100'000, {{0, 4096, true, t % 2 == 0}, {0, 4096, true, true}});
    p.add(100'000, {{8192, 12288, true, t % 2 == 0}, {8192, 12288, true, true}});
  }
  const LaneSchedule s = schedule_lanes(p.cmds, p.regions);
  ASSERT_EQ(s.order[0].size(), 20u);
  ASSERT_EQ(s.order[1].size(), 20u);
  for (int l = 0; l < 2; ++l) {
    const uint32_t parity = s.order[l][0] % 2;
    for (size_t k = 0; k < 20; ++k) {
      EXPECT_EQ(s.order[l][k] % 2, parity) << "lane " << l << " mixes the chains";
      EXPECT_EQ(s.wait[l][k], 0u) << "lane " << l << " waits for the other";
    }
  }
}

TEST(LaneSchedule, TheLongestChainStartsFirst) {
  // 20 independent commands, then a chain of 10 as long as all of them together: run in the
  // order given, the chain would start only when the short ones are done (1.5 ms on two
  // lanes); by level it starts at once and the short ones fill the other lane (1 ms).
  ConflictProgram p;
  for (uint64_t i = 0; i < 20; ++i) p.add(50'000, {{i * 64, i * 64 + 64, true, true}});
  for (int i = 0; i < 10; ++i) p.add(100'000, {{8192, 8256, true, true}});
  const LaneSchedule s = schedule_lanes(p.cmds, p.regions);
  const std::vector<uint64_t> end = lane_ends(s, p);
  EXPECT_LE(*std::max_element(end.begin(), end.end()), 1'050'000u);
}

}  // namespace
}  // namespace npu::emu::testing
