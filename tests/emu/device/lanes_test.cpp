// Two host lanes (emu/device/lanes.h): whatever lane runs a command, every byte ends as the
// serial order leaves it. Commands here are synthetic: each reads its read regions and writes
// into its write regions bytes derived from what it read and from its index, so any reordering
// of two conflicting commands changes the result.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "lane_schedule.h"
#include "lanes.h"

namespace npu::emu::testing {
namespace {

constexpr uint64_t kLaneSram = 64 * 1024;

/// LaneMemory of one run: SRAM (offsets) and "DRAM" (host addresses of a buffer).
struct LaneMemory {
  std::vector<uint8_t> sram = std::vector<uint8_t>(kLaneSram);
  std::vector<uint8_t> dram = std::vector<uint8_t>(kLaneSram);
  uint8_t* at(const LaneRegion& r) {
    return r.sram ? sram.data() + r.begin : reinterpret_cast<uint8_t*>(r.begin);
  }
};

struct LaneProgram {
  std::vector<LaneCommand> cmds;
  std::vector<LaneRegion> regions;  // DRAM regions as offsets into LaneMemory::dram
};

/// Command i: a hash of its index and of every byte it reads, then each written byte set
/// from that hash and its position.
void run_synthetic(const LaneProgram& p, uint32_t i, LaneMemory& m) {
  const LaneCommand& c = p.cmds[i];
  auto region = [&](const LaneRegion& r) {
    LaneRegion h = r;
    if (!r.sram) {
      h.begin = reinterpret_cast<uint64_t>(m.dram.data()) + r.begin;
      h.end = h.begin + (r.end - r.begin);
    }
    return h;
  };
  uint64_t h = 0x9E3779B97F4A7C15ull * (i + 1);
  for (uint32_t r = c.first; r < c.first + c.count; ++r) {
    const LaneRegion g = region(p.regions[r]);
    if (g.write) continue;
    const uint8_t* b = m.at(g);
    for (uint64_t k = 0; k < g.end - g.begin; ++k) h = (h ^ b[k]) * 0x100000001B3ull;
  }
  for (uint32_t r = c.first; r < c.first + c.count; ++r) {
    const LaneRegion g = region(p.regions[r]);
    if (!g.write) continue;
    uint8_t* b = m.at(g);
    for (uint64_t k = 0; k < g.end - g.begin; ++k) b[k] = static_cast<uint8_t>((h >> (k % 57)) + k);
  }
}

/// The program with its DRAM regions as host addresses of `m`.
std::vector<LaneRegion> host_regions(const LaneProgram& p, LaneMemory& m) {
  std::vector<LaneRegion> out = p.regions;
  for (LaneRegion& r : out) {
    if (r.sram) continue;
    const uint64_t base = reinterpret_cast<uint64_t>(m.dram.data());
    r.begin += base;
    r.end += base;
  }
  return out;
}

LaneProgram random_program(std::mt19937& rng, uint32_t n) {
  LaneProgram p;
  std::uniform_int_distribution<uint32_t> count(1, 4), size(1, 6000), cost(100, 50000);
  for (uint32_t i = 0; i < n; ++i) {
    LaneCommand c;
    c.first = static_cast<uint32_t>(p.regions.size());
    c.count = count(rng);
    c.cost = cost(rng);
    for (uint32_t r = 0; r < c.count; ++r) {
      LaneRegion g;
      g.sram = rng() % 4 != 0;
      const uint64_t len = size(rng);
      g.begin = rng() % (kLaneSram - len);
      g.end = g.begin + len;
      g.write = rng() % 2 == 0;
      p.regions.push_back(g);
    }
    p.cmds.push_back(c);
  }
  return p;
}

/// Tiles double-buffered through two SRAM slots as a compiler emits them: per tile, load
/// (DRAM -> in slot), compute (in slot + shared weights -> out slot), store (out -> DRAM).
LaneProgram tiled_program(uint32_t tiles) {
  LaneProgram p;
  constexpr uint64_t kSlot = 8192, kIn = 0, kOut = 2 * kSlot, kW = 4 * kSlot;
  auto add = [&](uint64_t cost, std::initializer_list<LaneRegion> rs) {
    LaneCommand c;
    c.first = static_cast<uint32_t>(p.regions.size());
    c.count = static_cast<uint32_t>(rs.size());
    c.cost = cost;
    p.regions.insert(p.regions.end(), rs);
    p.cmds.push_back(c);
  };
  add(1000, {{0, kSlot, false, false}, {kW, kW + kSlot, true, true}});  // weights
  for (uint32_t t = 0; t < tiles; ++t) {
    const uint64_t in = kIn + (t % 2) * kSlot, out = kOut + (t % 2) * kSlot;
    const uint64_t src = (t % 3) * kSlot, dst = 3 * kSlot + (t % 3) * 1024;
    add(2000, {{src, src + kSlot, false, false}, {in, in + kSlot, true, true}});
    add(20000, {{in, in + kSlot, true, false},
                {kW, kW + kSlot, true, false},
                {out, out + 1024, true, true}});
    add(500, {{out, out + 1024, true, false}, {dst, dst + 1024, false, true}});
  }
  return p;
}

LaneMemory serial_result(const LaneProgram& p, uint32_t seed) {
  LaneMemory m;
  std::mt19937 fill(seed);
  for (auto& b : m.sram) b = static_cast<uint8_t>(fill());
  for (auto& b : m.dram) b = static_cast<uint8_t>(fill());
  for (uint32_t i = 0; i < p.cmds.size(); ++i) run_synthetic(p, i, m);
  return m;
}

/// Runs `p` on `lanes` into a memory filled as serial_result fills it; `jitter` makes some
/// commands yield or sleep, so the lanes interleave differently.
LaneMemory lanes_result(Lanes& lanes, const LaneProgram& p, uint32_t seed, bool jitter) {
  LaneMemory m;
  std::mt19937 fill(seed);
  for (auto& b : m.sram) b = static_cast<uint8_t>(fill());
  for (auto& b : m.dram) b = static_cast<uint8_t>(fill());
  const std::vector<LaneRegion> regions = host_regions(p, m);
  const std::function<bool(uint32_t, int)> run = [&](uint32_t i, int) {
    if (jitter && i % 7 == 3) std::this_thread::yield();
    if (jitter && i % 31 == 5) std::this_thread::sleep_for(std::chrono::microseconds(50));
    run_synthetic(p, i, m);
    return true;
  };
  const std::span<const uint8_t> done = lanes.run(p.cmds, regions, run);
  EXPECT_EQ(std::count(done.begin(), done.end(), 1), static_cast<long>(p.cmds.size()));
  return m;
}

TEST(Lanes, RandomProgramsEndAsTheSerialOrder) {
  Lanes lanes;
  std::mt19937 rng(7);
  for (uint32_t round = 0; round < 40; ++round) {
    const LaneProgram p = random_program(rng, 50 + round * 10);
    const LaneMemory want = serial_result(p, round);
    const LaneMemory got = lanes_result(lanes, p, round, round % 2 == 1);
    EXPECT_EQ(got.sram, want.sram) << "round " << round;
    EXPECT_EQ(got.dram, want.dram) << "round " << round;
  }
}

TEST(Lanes, TiledPipelineUsesBothLanesAndEndsAsTheSerialOrder) {
  Lanes lanes;
  const LaneProgram p = tiled_program(200);
  const uint64_t before = lanes.lane1_commands(), drained_before = lanes.drained_runs();
  for (uint32_t round = 0; round < 5; ++round) {  // ring positions carry across runs
    const LaneMemory want = serial_result(p, round);
    const LaneMemory got = lanes_result(lanes, p, round, round == 2);
    EXPECT_EQ(got.sram, want.sram) << "round " << round;
    EXPECT_EQ(got.dram, want.dram) << "round " << round;
  }
  // Both slot chains run, one per lane: lane 1 takes a real share of the work (unless a run
  // drained because this host held a lane's thread back).
  if (lanes.drained_runs() == drained_before) {
    EXPECT_GT(lanes.lane1_commands() - before, 5u * p.cmds.size() / 4);
  }
  const LaneSchedule s = schedule_lanes(p.cmds, p.regions);
  EXPECT_GT(s.order[1].size(), p.cmds.size() / 4);
}

TEST(Lanes, AStalledLaneDrainsToOneThreadAndEndsAsTheSerialOrder) {
  Lanes lanes;
  const LaneProgram p = tiled_program(100);  // about 2 ms of estimated work
  for (uint32_t round = 0; round < 3; ++round) {
    const uint64_t drained_before = lanes.drained_runs();
    LaneMemory m;
    std::mt19937 fill(round);
    for (auto& b : m.sram) b = static_cast<uint8_t>(fill());
    for (auto& b : m.dram) b = static_cast<uint8_t>(fill());
    const std::vector<LaneRegion> regions = host_regions(p, m);
    std::atomic<bool> held{false};
    const std::function<bool(uint32_t, int)> run = [&](uint32_t i, int lane) {
      // Lane 1's first command is held back 50 ms, as a loaded host may hold its thread.
      if (lane == 1 && !held.exchange(true))
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      run_synthetic(p, i, m);
      return true;
    };
    const std::span<const uint8_t> done = lanes.run(p.cmds, regions, run);
    EXPECT_EQ(std::count(done.begin(), done.end(), 1), static_cast<long>(p.cmds.size()));
    EXPECT_EQ(lanes.drained_runs(), drained_before + 1) << "round " << round;
    const LaneMemory want = serial_result(p, round);
    EXPECT_EQ(m.sram, want.sram) << "round " << round;
    EXPECT_EQ(m.dram, want.dram) << "round " << round;
  }
  // And the lanes run the next job as usual.
  const LaneMemory want = serial_result(p, 7);
  const LaneMemory got = lanes_result(lanes, p, 7, false);
  EXPECT_EQ(got.sram, want.sram);
}

TEST(Lanes, AStopStartsNoLaterCommandAndReportsWhatRan) {
  Lanes lanes;
  const LaneProgram p = tiled_program(60);
  LaneMemory m;
  const std::vector<LaneRegion> regions = host_regions(p, m);
  constexpr uint32_t kStop = 90;
  std::atomic<uint32_t> after_stop{0};
  std::atomic<bool> stopped{false};
  const std::function<bool(uint32_t, int)> run = [&](uint32_t i, int) {
    if (stopped.load()) after_stop.fetch_add(1);
    if (i == kStop) {
      stopped.store(true);
      return false;
    }
    return true;
  };
  const std::span<const uint8_t> done = lanes.run(p.cmds, regions, run);
  EXPECT_EQ(done[kStop], 0);
  // Commands already running on the other lane may finish; nothing new starts after a stop.
  EXPECT_LE(after_stop.load(), 1u);
  EXPECT_EQ(done[p.cmds.size() - 1], 0);
  // The lanes are usable again.
  const LaneMemory want = serial_result(p, 3);
  const LaneMemory got = lanes_result(lanes, p, 3, false);
  EXPECT_EQ(got.sram, want.sram);
}

}  // namespace
}  // namespace npu::emu::testing
