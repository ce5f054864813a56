// The device's synchronization checker (emu/device/racecheck.h) on hand-built command
// buffers: each hazard kind, partial overlaps, hazards a FENCE or a chain of semaphores
// through three engines hides, one report per pair, unchanged cycles, and a report that does
// not depend on the order the host runs the engine threads in.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "device_fixture.h"
#include "npu/isa/builder.h"
#include "npu/isa/validate.h"

namespace npu::emu::testing {
namespace {

using isa::CommandBufferBuilder;

// A racy buffer run *without* the checker races on the emulator's SRAM on the host too (the
// checker runs data commands one at a time): such runs are left out of TSan builds.
#if defined(__SANITIZE_THREAD__)
constexpr bool kTsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kTsan = true;
#else
constexpr bool kTsan = false;
#endif
#else
constexpr bool kTsan = false;
#endif

constexpr uint32_t kTile = 64;  // bytes
constexpr uint32_t kIn = 0, kW = 4096, kChan = 8192, kOut = 12288, kCopy = 16384;

isa::Program finish(CommandBufferBuilder& b) {
  const auto bytes = b.finish();
  auto p = isa::validate(bytes, small_config());
  EXPECT_TRUE(p) << p.error().message;
  return p ? std::move(*p) : isa::Program{};
}

/// One command of a hazard: index, engine, opcode.
using Cmd = std::tuple<uint32_t, uint16_t, uint16_t>;
/// One hazard as a comparable tuple: kind, space, begin, end, first, second.
using Key = std::tuple<uint32_t, uint32_t, uint64_t, uint64_t, Cmd, Cmd>;
using Keys = std::vector<Key>;
Keys keys(const RaceReport& r) {
  Keys out;
  for (const auto& h : r.hazards) {
    out.emplace_back(h.kind, h.space, h.begin, h.end,
                     Cmd{h.first.cmd_index, h.first.engine, h.first.opcode},
                     Cmd{h.second.cmd_index, h.second.engine, h.second.opcode});
  }
  return out;
}

constexpr uint32_t kRaw = DRM_NPU_HAZARD_RAW, kWar = DRM_NPU_HAZARD_WAR, kWaw = DRM_NPU_HAZARD_WAW;
constexpr uint32_t kSram = DRM_NPU_HAZARD_SPACE_SRAM, kDram = DRM_NPU_HAZARD_SPACE_DRAM;
Cmd load(uint32_t i) {
  return {i, NPU_ENGINE_DMA_IN, NPU_OP_DMA_LOAD};
}
Cmd store(uint32_t i) {
  return {i, NPU_ENGINE_DMA_OUT, NPU_OP_DMA_STORE};
}
Cmd copy(uint32_t i) {
  return {i, NPU_ENGINE_VECTOR, NPU_OP_ACTIVATION};
}
Cmd conv(uint32_t i) {
  return {i, NPU_ENGINE_MATRIX, NPU_OP_CONV2D};
}

class Racecheck : public ::testing::Test {
 protected:
  RaceReport check(const isa::Program& p, JobOptions options = {}) {
    options.racecheck = true;
    JobResult r = dev_.run(p, dram_.mmu, options);
    EXPECT_EQ(r.status, DRM_NPU_JOB_OK) << r.fault.kind;
    EXPECT_TRUE(r.profile.race.checked);
    EXPECT_FALSE(r.profile.race.partial);
    EXPECT_EQ(r.profile.race.total, r.profile.race.hazards.size());
    return r.profile.race;
  }

  /// DMA_IN loads a tile from `src_`, the vector engine copies it (after a wait on semaphore
  /// 0 unless `drop_wait`), DMA_OUT stores the copy to `dst_`.
  CommandBufferBuilder load_copy_store(bool drop_wait, bool fence = false) {
    CommandBufferBuilder b;
    b.dma_load({.dram = src_, .sram = kIn, .size = {kTile, 1, 1}});  // 0
    b.sem_signal(NPU_ENGINE_DMA_IN, 0);                              // 1
    if (fence) b.fence();
    if (!drop_wait) b.sem_wait(NPU_ENGINE_VECTOR, 0);
    b.activation({.func = NPU_ACT_COPY,
                  .dtype = NPU_DTYPE_INT8,
                  .shape = {1, 1, 1, kTile},
                  .in_addr = kIn,
                  .out_addr = kCopy});
    b.sem_signal(NPU_ENGINE_VECTOR, 1);
    b.sem_wait(NPU_ENGINE_DMA_OUT, 1);
    b.dma_store({.dram = dst_, .sram = kCopy, .size = {kTile, 1, 1}});
    if (drop_wait && !fence) b.sem_wait(NPU_ENGINE_VECTOR, 0);  // keep semaphore 0 balanced
    return b;
  }

  /// DMA_IN loads input and weights and signals; the matrix engine waits and runs a 1x1 conv
  /// reading [kIn, kIn + 64); then DMA_IN loads `next_bytes` at `next_at` (the next tile),
  /// after waiting for the matrix engine unless `drop_wait`.
  CommandBufferBuilder conv_then_reload(bool drop_wait, uint32_t next_at, uint32_t next_bytes) {
    CommandBufferBuilder b;
    b.dma_load({.dram = src_, .sram = kIn, .size = {kTile, 1, 1}});        // 0
    b.dma_load({.dram = src_ + 4096, .sram = kW, .size = {kTile, 1, 1}});  // 1
    b.dma_load({.dram = src_ + 8192, .sram = kChan, .size = {16, 1, 1}});  // 2
    b.sem_signal(NPU_ENGINE_DMA_IN, 0);                                    // 3
    b.sem_wait(NPU_ENGINE_MATRIX, 0);                                      // 4
    b.conv2d({.in_addr = kIn,                                              // 5
              .w_addr = kW,
              .out_addr = kOut,
              .chan_addr = kChan,
              .in_h = 1,
              .in_w = 1,
              .in_c = kTile,
              .out_c = 1});
    b.sem_signal(NPU_ENGINE_MATRIX, 1);  // 6: the input tile is free again
    if (!drop_wait) b.sem_wait(NPU_ENGINE_DMA_IN, 1);
    b.dma_load({.dram = src_, .sram = next_at, .size = {next_bytes, 1, 1}});
    if (drop_wait) b.sem_wait(NPU_ENGINE_DMA_IN, 1);
    return b;
  }

  Device dev_{small_config()};
  Dram dram_;
  uint64_t src_ = dram_.add(65536);
  uint64_t dst_ = dram_.add(65536);
};

TEST_F(Racecheck, SynchronizedProgramHasNoHazards) {
  auto b = load_copy_store(false);
  EXPECT_TRUE(check(finish(b)).hazards.empty());
}

TEST_F(Racecheck, DroppedWaitIsReadAfterWrite) {
  auto b = load_copy_store(true);
  EXPECT_EQ(keys(check(finish(b))), Keys({{kRaw, kSram, kIn, kIn + kTile, load(0), copy(2)}}));
}

TEST_F(Racecheck, FenceOrdersWhatTheWaitWould) {
  auto b = load_copy_store(true, /*fence=*/true);
  EXPECT_TRUE(check(finish(b)).hazards.empty());
}

TEST_F(Racecheck, OverwritingATileTheMatrixEngineReadsIsWriteAfterRead) {
  auto ok = conv_then_reload(false, kIn, kTile);
  EXPECT_TRUE(check(finish(ok)).hazards.empty());

  // The conv (command 5) reads first in buffer order, the reload (7) writes.
  auto b = conv_then_reload(true, kIn, kTile);
  EXPECT_EQ(keys(check(finish(b))), Keys({{kWar, kSram, kIn, kIn + kTile, conv(5), load(7)}}));
}

TEST_F(Racecheck, PartialOverlapReportsOnlyTheSharedBytes) {
  // The reload covers [kIn + 48, kIn + 112): 16 bytes of the conv's input.
  auto b = conv_then_reload(true, kIn + 48, kTile);
  EXPECT_EQ(keys(check(finish(b))), Keys({{kWar, kSram, kIn + 48, kIn + kTile, conv(5), load(7)}}));

  // Just past the input tile: nothing shared, nothing reported.
  auto c = conv_then_reload(true, kIn + kTile, kTile);
  EXPECT_TRUE(check(finish(c)).hazards.empty());
}

TEST_F(Racecheck, OnePairIsReportedOnceWithTheHullOfItsOverlaps) {
  // One reload over both the input tile and the weights: two operands of the conv, one WAR.
  auto b = conv_then_reload(true, kIn, kW + kTile);
  EXPECT_EQ(keys(check(finish(b))), Keys({{kWar, kSram, kIn, kW + kTile, conv(5), load(7)}}));
}

TEST_F(Racecheck, TwoEnginesWritingOneTileIsWriteAfterWrite) {
  CommandBufferBuilder b;
  b.dma_load({.dram = src_, .sram = kCopy, .size = {kTile, 1, 1}});  // 0
  b.dma_load({.dram = src_, .sram = kIn, .size = {kTile, 1, 1}});    // 1
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);                                // 2
  b.sem_wait(NPU_ENGINE_VECTOR, 0);                                  // 3
  b.activation({.func = NPU_ACT_COPY,                                // 4: [kCopy, +64) again
                .dtype = NPU_DTYPE_INT8,
                .shape = {1, 1, 1, kTile},
                .in_addr = kIn,
                .out_addr = kCopy});
  b.dma_load({.dram = src_, .sram = kCopy, .size = {kTile, 1, 1}});  // 5: unordered with 4
  EXPECT_EQ(keys(check(finish(b))), Keys({{kWaw, kSram, kCopy, kCopy + kTile, copy(4), load(5)}}));
}

// Only dma_out writes DRAM, so a DRAM hazard pairs a store with a load: reading back what
// dma_out stores without waiting for it.
TEST_F(Racecheck, LoadingWhatIsBeingStoredIsADramHazard) {
  CommandBufferBuilder b;
  b.dma_load({.dram = src_, .sram = kIn, .size = {kTile, 1, 1}});        // 0
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);                                    // 1
  b.sem_wait(NPU_ENGINE_DMA_OUT, 0);                                     // 2
  b.dma_store({.dram = dst_ + 32, .sram = kIn, .size = {kTile, 1, 1}});  // 3
  b.dma_load({.dram = dst_, .sram = kCopy, .size = {kTile, 1, 1}});      // 4: no wait
  EXPECT_EQ(keys(check(finish(b))),
            Keys({{kRaw, kDram, dst_ + 32, dst_ + kTile, store(3), load(4)}}));
}

// dma_in -> matrix -> vector: the vector engine's read of dma_in's tile is ordered through
// the matrix engine, which never touches it. Signalling before waiting breaks the chain.
TEST_F(Racecheck, ChainOfSemaphoresThroughThreeEngines) {
  for (bool broken : {false, true}) {
    CommandBufferBuilder b;
    b.dma_load({.dram = src_, .sram = kIn, .size = {kTile, 1, 1}});  // 0
    b.sem_signal(NPU_ENGINE_DMA_IN, 0);                              // 1
    if (broken) b.sem_signal(NPU_ENGINE_MATRIX, 1);                  // 2: too early
    b.sem_wait(NPU_ENGINE_MATRIX, 0);
    b.nop(NPU_ENGINE_MATRIX);
    if (!broken) b.sem_signal(NPU_ENGINE_MATRIX, 1);
    b.sem_wait(NPU_ENGINE_VECTOR, 1);
    const uint32_t copied = b.activation({.func = NPU_ACT_COPY,
                                          .dtype = NPU_DTYPE_INT8,
                                          .shape = {1, 1, 1, kTile},
                                          .in_addr = kIn,
                                          .out_addr = kCopy});
    const Keys want =
        broken ? Keys({{kRaw, kSram, kIn, kIn + kTile, load(0), copy(copied)}}) : Keys{};
    EXPECT_EQ(keys(check(finish(b))), want) << (broken ? "broken chain" : "chain");
  }
}

// A wait of count 2 is completed by the second signal: the waiter is ordered after both
// loads, but a load after the second signal stays unordered.
TEST_F(Racecheck, TheSignalThatCompletesTheCountOrdersTheWait) {
  CommandBufferBuilder b;
  b.dma_load({.dram = src_, .sram = kIn, .size = {32, 1, 1}});         // 0
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);                                  // 1
  b.dma_load({.dram = src_, .sram = kIn + 32, .size = {32, 1, 1}});    // 2
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);                                  // 3
  b.dma_load({.dram = src_, .sram = kCopy + 64, .size = {32, 1, 1}});  // 4: after the signal
  b.sem_wait(NPU_ENGINE_VECTOR, 0, 2);                                 // 5
  b.activation({.func = NPU_ACT_COPY,                                  // 6
                .dtype = NPU_DTYPE_INT8,
                .shape = {1, 1, 1, 2 * kTile},
                .in_addr = kIn,
                .out_addr = kCopy});
  EXPECT_EQ(keys(check(finish(b))),
            Keys({{kWaw, kSram, kCopy + 64, kCopy + 96, load(4), copy(6)}}));
}

// (The racy buffer's output depends on the race; its cycles do not.)
TEST_F(Racecheck, CyclesAndResultsAreTheSameWithTheCheckerOn) {
  for (bool racy : {false, true}) {
    if (racy && kTsan) continue;
    auto b = load_copy_store(racy);
    const isa::Program p = finish(b);
    for (uint32_t i = 0; i < kTile; ++i) dram_.at(0)[i] = std::byte(i * 3 + 1);
    std::fill(dram_.at(1).begin(), dram_.at(1).end(), std::byte{0});
    JobResult off = dev_.run(p, dram_.mmu);
    const auto out_off = dram_.at(1);
    std::fill(dram_.at(1).begin(), dram_.at(1).end(), std::byte{0});
    JobOptions o;
    o.racecheck = true;
    JobResult on = dev_.run(p, dram_.mmu, o);
    EXPECT_EQ(off.profile.cycles, on.profile.cycles);
    ASSERT_EQ(off.profile.timeline.size(), on.profile.timeline.size());
    for (size_t i = 0; i < on.profile.timeline.size(); ++i) {
      EXPECT_EQ(off.profile.timeline[i].start_cycle, on.profile.timeline[i].start_cycle);
      EXPECT_EQ(off.profile.timeline[i].end_cycle, on.profile.timeline[i].end_cycle);
    }
    if (!racy) {
      EXPECT_EQ(out_off, dram_.at(1));
    }
    EXPECT_FALSE(off.profile.race.checked);
    EXPECT_TRUE(off.profile.race.hazards.empty());
    EXPECT_EQ(on.profile.race.hazards.size(), racy ? 1u : 0u);
  }
}

// The report is a function of the program: making either engine of a racing pair run first
// on the host (by stalling the other's thread), or stalling threads at random, gives the
// same hazards every time.
TEST_F(Racecheck, ReportDoesNotDependOnHostThreadOrder) {
  auto b = conv_then_reload(true, kIn + 16, kTile);
  b.sem_signal(NPU_ENGINE_DMA_IN, 2);  // and a RAW from dma_in into the vector engine
  b.dma_load({.dram = src_, .sram = kCopy, .size = {kTile, 1, 1}});
  b.activation({.func = NPU_ACT_COPY,
                .dtype = NPU_DTYPE_INT8,
                .shape = {1, 1, 1, kTile},
                .in_addr = kCopy,
                .out_addr = kCopy + 1024});
  b.sem_wait(NPU_ENGINE_VECTOR, 2);
  const isa::Program p = finish(b);
  const auto want = keys(check(p));
  ASSERT_EQ(want.size(), 2u);

  using namespace std::chrono_literals;
  auto stall = [](uint32_t engine) {
    return [engine](uint32_t e, uint32_t) {
      if (e == engine) std::this_thread::sleep_for(20ms);
    };
  };
  for (uint32_t slow : {NPU_ENGINE_DMA_IN, NPU_ENGINE_MATRIX, NPU_ENGINE_VECTOR}) {
    JobOptions o;
    o.before_command = stall(slow);
    EXPECT_EQ(keys(check(p, o)), want) << "slow engine " << slow;
  }
  std::mt19937 rng(12345);
  for (int run = 0; run < 40; ++run) {
    std::vector<int> delay_us(p.cmds.size());
    for (int& d : delay_us) d = static_cast<int>(rng() % 400);
    auto random_stalls = [&delay_us](uint32_t, uint32_t index) {
      std::this_thread::sleep_for(std::chrono::microseconds(delay_us[index]));
    };
    JobOptions o;
    o.before_command = random_stalls;
    EXPECT_EQ(keys(check(p, o)), want) << "run " << run;
  }
  for (int run = 0; run < 200; ++run) EXPECT_EQ(keys(check(p)), want) << "run " << run;
}

TEST_F(Racecheck, AFaultedJobReportsAPartialCheck) {
  CommandBufferBuilder b;
  b.dma_load({.dram = src_, .sram = kIn, .size = {kTile, 1, 1}});
  b.activation({.func = NPU_ACT_COPY,
                .dtype = NPU_DTYPE_INT8,
                .shape = {1, 1, 1, kTile},
                .in_addr = kIn,
                .out_addr = kCopy});
  b.dma_store({.dram = dst_, .sram = kCopy, .size = {kTile, 1, 1}});
  isa::Program p = finish(b);
  p.cmds[2].dma.dram_addr = 0x7000'0000'0000ull;  // unmapped: an MMU fault
  JobOptions o;
  o.racecheck = true;
  JobResult r = dev_.run(p, dram_.mmu, o);
  EXPECT_EQ(r.status, DRM_NPU_JOB_ERROR);
  EXPECT_TRUE(r.profile.race.checked);
  EXPECT_TRUE(r.profile.race.partial);
}

TEST_F(Racecheck, ListIsCappedButEveryHazardIsCounted) {
  CommandBufferBuilder b;
  // 40 loads race with 40 copies of the same tile: 1600 RAW pairs, plus WAW among nothing.
  for (int i = 0; i < 40; ++i) b.dma_load({.dram = src_, .sram = kIn, .size = {kTile, 1, 1}});
  for (int i = 0; i < 40; ++i) {
    b.activation({.func = NPU_ACT_COPY,
                  .dtype = NPU_DTYPE_INT8,
                  .shape = {1, 1, 1, kTile},
                  .in_addr = kIn,
                  .out_addr = kCopy});
  }
  JobOptions o;
  o.racecheck = true;
  JobResult r = dev_.run(finish(b), dram_.mmu, o);
  EXPECT_EQ(r.profile.race.total, 1600u);
  ASSERT_EQ(r.profile.race.hazards.size(), size_t{DRM_NPU_MAX_HAZARDS});
  // The kept ones are the first in report order.
  EXPECT_EQ(r.profile.race.hazards.front().first.cmd_index, 0u);
  EXPECT_EQ(r.profile.race.hazards.front().second.cmd_index, 40u);
  EXPECT_EQ(r.profile.race.hazards.back().first.cmd_index, 25u);
  EXPECT_EQ(r.profile.race.hazards.back().second.cmd_index, 63u);
}

}  // namespace
}  // namespace npu::emu::testing
