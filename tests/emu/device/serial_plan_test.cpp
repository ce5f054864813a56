// Serial plans kept per program (emu/device/serial_plan.h): a program with an id (as the kernel
// driver's program cache hands them out) runs from the plan of its first run with the same
// bytes, cycles and profile as a program without one; a kept plan is not used for a job whose
// Mmu does not map the program's DRAM, which faults exactly as a program without an id does.
// A large job whose safe points cut it into small segments runs every segment on the lanes.
// The runs of a kept plan share its profile's timeline until one is changed, and its lanes'
// inputs while the job's Mmu maps the same memory.
#include <thread>

#include "device_fixture.h"
#include "npu/isa/builder.h"
#include "npu/isa/safe_points.h"
#include "npu/isa/validate.h"

namespace npu::emu::testing {
namespace {

/// load x -> SRAM 0, then store SRAM 0 -> d, validated as the kernel driver validates.
isa::Program copy_program(uint64_t x, uint64_t d, const isa::DeviceConfig& cfg) {
  isa::CommandBufferBuilder b;
  b.add(dma(NPU_OP_DMA_LOAD, x, 0, 4096));
  b.add(sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_IN, 0));
  b.add(sem(NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT, 0));
  b.add(dma(NPU_OP_DMA_STORE, d, 0, 4096));
  auto p = isa::validate(b.finish(), cfg);
  EXPECT_TRUE(p.has_value()) << p.error().message;
  return p.has_value() ? std::move(*p) : isa::Program{};
}

/// `segs` safe-point segments, each a load of `bytes` from x + seg * bytes into one of two SRAM
/// slots and its store to d + seg * bytes, then a FENCE that is a safe point.
isa::Program segments_program(uint64_t x, uint64_t d, uint32_t segs, uint32_t bytes,
                              const isa::DeviceConfig& cfg) {
  isa::CommandBufferBuilder b;
  for (uint32_t seg = 0; seg < segs; ++seg) {
    const uint32_t slot = (seg % 2) * bytes;
    b.add(dma(NPU_OP_DMA_LOAD, x + uint64_t{seg} * bytes, slot, bytes));
    b.add(sem(NPU_OP_SEM_SIGNAL, NPU_ENGINE_DMA_IN, 0));
    b.add(sem(NPU_OP_SEM_WAIT, NPU_ENGINE_DMA_OUT, 0));
    b.add(dma(NPU_OP_DMA_STORE, d + uint64_t{seg} * bytes, slot, bytes));
    npu_cmd fence = make(NPU_OP_FENCE, NPU_ENGINE_CP);  // a safe point
    fence.hdr.flags = NPU_FENCE_FLAG_PREEMPT;
    b.add(fence);
  }
  auto p = isa::validate(b.finish(), cfg);
  EXPECT_TRUE(p.has_value()) << p.error().message;
  return p.has_value() ? std::move(*p) : isa::Program{};
}

/// Two DRAM buffers of segs * bytes in a fresh `dram` (the source filled with a pattern) and
/// segments_program() copying the one to the other.
isa::Program segments_copy(Dram& dram, uint32_t segs, uint32_t bytes,
                           const isa::DeviceConfig& cfg) {
  const uint64_t x = dram.add(uint64_t{segs} * bytes), d = dram.add(uint64_t{segs} * bytes);
  for (size_t i = 0; i < size_t{segs} * bytes; ++i)
    dram.at(0)[i] = std::byte((i * 5 + i / 4096) | 1);
  return segments_program(x, d, segs, bytes, cfg);
}

/// Runs `p` from command `begin`, on the lanes or on one thread, stopping at the `nth` safe
/// point the run offers (-1: at none).
JobResult run_stopping(Device& dev, const isa::Program& p, const Mmu& mmu, HostLanes lanes,
                       uint32_t begin, int nth) {
  JobOptions options;
  options.host_lanes = lanes;
  options.begin = begin;
  int asked = 0;  // the gate asks about safe point k as segment k + 1 is entered
  options.yield = [&](uint64_t) { return asked++ == nth; };
  return dev.run(p, mmu, options);
}

void expect_same(const JobResult& a, const JobResult& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.fault.kind, b.fault.kind);
  EXPECT_EQ(a.fault.cmd_index, b.fault.cmd_index);
  EXPECT_EQ(a.profile.cycles, b.profile.cycles);
  EXPECT_EQ(a.profile.dma_bytes_in, b.profile.dma_bytes_in);
  EXPECT_EQ(a.profile.dma_bytes_out, b.profile.dma_bytes_out);
  ASSERT_EQ(a.profile.timeline.size(), b.profile.timeline.size());
  for (size_t i = 0; i < a.profile.timeline.size(); ++i) {
    EXPECT_EQ(a.profile.timeline[i].cmd_index, b.profile.timeline[i].cmd_index);
    EXPECT_EQ(a.profile.timeline[i].start_cycle, b.profile.timeline[i].start_cycle);
    EXPECT_EQ(a.profile.timeline[i].end_cycle, b.profile.timeline[i].end_cycle);
  }
}

TEST(SerialPlan, AKeptPlanRunsAsAFreshOne) {
  const isa::DeviceConfig cfg = small_config();
  Device dev(cfg);
  Dram dram;
  const uint64_t x = dram.add(4096), d = dram.add(4096);
  const isa::Program fresh = copy_program(x, d, cfg);
  isa::Program kept = fresh;
  kept.id = 1001;
  const JobResult reference = dev.run(fresh, dram.mmu);
  ASSERT_EQ(reference.status, DRM_NPU_JOB_OK);
  EXPECT_FALSE(dev.run(fresh, dram.mmu).plan_reused);  // no id: planned every time
  for (unsigned run = 0; run < 3; ++run) {
    SCOPED_TRACE(run);
    for (size_t i = 0; i < 4096; ++i) dram.at(0)[i] = std::byte((i * 13 + run) & 0xff);
    const JobResult r = dev.run(kept, dram.mmu);
    EXPECT_EQ(r.plan_reused, run > 0);
    expect_same(r, reference);
    EXPECT_EQ(dram.at(1), dram.at(0));
  }
}

// The runs of a kept plan hand on its complete profile without copying its timeline (a fresh
// copy per inference cost ResNet-50 190 page faults); changing one run's timeline (as the kernel
// driver does when it joins a preempted job's parts) copies it first and leaves the others.
TEST(SerialPlan, RunsOfAKeptPlanShareTheProfileTimeline) {
  const isa::DeviceConfig cfg = small_config();
  Device dev(cfg);
  Dram dram;
  const uint64_t x = dram.add(4096), d = dram.add(4096);
  isa::Program kept = copy_program(x, d, cfg);
  kept.id = 1003;
  ASSERT_EQ(dev.run(kept, dram.mmu).status, DRM_NPU_JOB_OK);
  const JobResult a = dev.run(kept, dram.mmu);
  JobResult b = dev.run(kept, dram.mmu);
  ASSERT_TRUE(a.plan_reused && b.plan_reused);
  ASSERT_FALSE(a.profile.timeline.empty());
  EXPECT_EQ(a.profile.timeline.data(), b.profile.timeline.data()) << "copied, not shared";
  const uint64_t end = a.profile.timeline[0].end_cycle;
  b.profile.timeline.mutate()[0].end_cycle = end + 7;
  EXPECT_NE(a.profile.timeline.data(), b.profile.timeline.data());
  EXPECT_EQ(a.profile.timeline[0].end_cycle, end);
  EXPECT_EQ(b.profile.timeline[0].end_cycle, end + 7);
  EXPECT_EQ(dev.run(kept, dram.mmu).profile.timeline[0].end_cycle, end);
}

// The lanes keep a stretch's inputs (its commands' operand regions and DRAM host addresses)
// for the plan's next runs while the job's Mmu maps the same memory the same way; a job whose
// Mmu maps the program's VAs to other host memory builds them again, so its results land in its
// own buffers and the other job's stay as they were.
TEST(SerialPlan, KeptLaneInputsFollowTheMmu) {
  const isa::DeviceConfig cfg = small_config();
  Device dev(cfg);
  constexpr uint32_t kSegs = 32, kBytes = 4096;
  Dram a, b;  // the same VAs in two sets of host buffers
  isa::Program p = segments_copy(a, kSegs, kBytes, cfg);
  segments_copy(b, kSegs, kBytes, cfg);
  for (std::byte& x : b.at(0)) x = ~x;
  p.id = 1004;
  JobOptions on;
  on.host_lanes = HostLanes::On;
  const std::vector<std::byte> zeros(size_t{kSegs} * kBytes);
  for (int run = 0; run < 4; ++run) {  // inputs built, then kept
    SCOPED_TRACE(run);
    a.at(1) = zeros;
    const JobResult r = dev.run(p, a.mmu, on);
    ASSERT_EQ(r.status, DRM_NPU_JOB_OK);
    EXPECT_TRUE(r.on_lanes);
    EXPECT_EQ(a.at(1), a.at(0));
  }
  a.at(1) = zeros;
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE(run);
    const JobResult r = dev.run(p, b.mmu, on);
    ASSERT_EQ(r.status, DRM_NPU_JOB_OK);
    EXPECT_TRUE(r.plan_reused && r.on_lanes);
    EXPECT_EQ(b.at(1), b.at(0));
    EXPECT_EQ(a.at(1), zeros) << "written through the other job's host addresses";
  }
  ASSERT_EQ(dev.run(p, a.mmu, on).status, DRM_NPU_JOB_OK);
  EXPECT_EQ(a.at(1), a.at(0));
}

TEST(SerialPlan, AJobWhoseMmuDoesNotMapTheProgramFaultsAsWithoutAPlan) {
  const isa::DeviceConfig cfg = small_config();
  Device dev(cfg);
  Dram good, read_only;  // the same addresses; in the second, d cannot be written
  const uint64_t x = good.add(4096), d = good.add(4096);
  read_only.add(4096);
  read_only.add(4096, isa::kRead);
  const isa::Program fresh = copy_program(x, d, cfg);
  isa::Program kept = fresh;
  kept.id = 1002;
  ASSERT_EQ(dev.run(kept, good.mmu).status, DRM_NPU_JOB_OK);  // its plan is kept

  const JobResult reference = dev.run(fresh, read_only.mmu);
  ASSERT_EQ(reference.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(reference.fault.kind, DRM_NPU_FAULT_MMU);
  const JobResult r = dev.run(kept, read_only.mmu);
  EXPECT_FALSE(r.plan_reused);
  expect_same(r, reference);
  // And the plan still serves the good Mmu.
  const JobResult again = dev.run(kept, good.mmu);
  EXPECT_EQ(again.status, DRM_NPU_JOB_OK);
  EXPECT_TRUE(again.plan_reused);
}

TEST(SerialPlan, ALargeJobOfSmallSegmentsRunsThemAllOnTheLanes) {
  // 32 segments of a 16 KiB load and store each (2 data commands, below the lanes' minimum of
  // 64 per job) at 1 byte per DMA cycle: 64 data commands and 1M cycles in all, so the job
  // qualifies as a whole. Its first run goes on the lanes (LaneChoice tries them first).
  if (std::thread::hardware_concurrency() < 2 || std::getenv("NPU_EMU_LANES") != nullptr ||
      std::getenv("NPU_EMU_THREADS") != nullptr)
    GTEST_SKIP() << "needs the default lanes mode on two CPUs";
  isa::DeviceConfig cfg = small_config();
  cfg.dma.bytes_per_cycle = 1;
  Device dev(cfg);
  Dram dram;
  constexpr uint32_t kSegs = 32, kBytes = 16384;
  const uint64_t x = dram.add(kSegs * kBytes), d = dram.add(kSegs * kBytes);
  for (size_t i = 0; i < kSegs * kBytes; ++i) dram.at(0)[i] = std::byte((i * 7 + i / 4096) & 0xff);
  const isa::Program p = segments_program(x, d, kSegs, kBytes, cfg);
  ASSERT_FALSE(p.cmds.empty());
  JobOptions options;
  options.yield = [](uint64_t) { return false; };  // a gate, never stopping
  ASSERT_EQ(isa::safe_points(p.cmds).size(), kSegs);
  const JobResult r = dev.run(p, dram.mmu, options);
  ASSERT_EQ(r.status, DRM_NPU_JOB_OK);
  EXPECT_GE(r.profile.cycles, 1'000'000u);
  EXPECT_TRUE(r.on_lanes);
  EXPECT_EQ(dram.at(1), dram.at(0));
}

// On the lanes, whole safe-point segments run as one stretch (up to Impl::kLanesStretch
// commands), and the segments' commands overlap; the job still stops exactly at the safe point
// the gate chose: every command before it done, none after it begun (each asks the gate before
// it starts), and the rest runs when the job is resumed there.
TEST(SerialPlan, ALanesStretchStopsAtTheSafePointTheGateChose) {
  const isa::DeviceConfig cfg = small_config();
  Device dev(cfg);
  Dram dram;
  constexpr uint32_t kSegs = 32, kBytes = 4096;
  const isa::Program p = segments_copy(dram, kSegs, kBytes, cfg);
  const std::vector<uint32_t> points = isa::safe_points(p.cmds);
  ASSERT_EQ(points.size(), kSegs);
  for (const uint32_t stop : {0u, 1u, 7u, 30u}) {
    SCOPED_TRACE(stop);
    std::fill(dram.at(1).begin(), dram.at(1).end(), std::byte{0});
    const JobResult r = run_stopping(dev, p, dram.mmu, HostLanes::On, 0, static_cast<int>(stop));
    ASSERT_EQ(r.status, DRM_NPU_JOB_OK);
    EXPECT_TRUE(r.on_lanes);
    EXPECT_EQ(r.resume_at, points[stop] + 1);
    for (uint32_t seg = 0; seg < kSegs; ++seg) {
      const auto from = static_cast<ptrdiff_t>(seg * kBytes);
      const bool stored = std::equal(dram.at(1).begin() + from, dram.at(1).begin() + from + kBytes,
                                     dram.at(0).begin() + from);
      const bool untouched =
          std::all_of(dram.at(1).begin() + from, dram.at(1).begin() + from + kBytes,
                      [](std::byte v) { return v == std::byte{0}; });
      EXPECT_TRUE(seg <= stop ? stored : untouched) << "segment " << seg;
    }
    const JobResult r2 = run_stopping(dev, p, dram.mmu, HostLanes::On, r.resume_at, -1);
    ASSERT_EQ(r2.status, DRM_NPU_JOB_OK);
    EXPECT_EQ(r2.resume_at, 0u);
    EXPECT_EQ(dram.at(1), dram.at(0));
  }
}

// A device keeps the safe points of a program with an id between its runs; they are relative
// to where a run begins, so a resumed run (JobOptions::begin) must not take those of a run
// from the start, nor the other way round: each run below stops at the safe point it was told.
TEST(SerialPlan, AProgramsSafePointsAreKeptPerBegin) {
  const isa::DeviceConfig cfg = small_config();
  Device dev(cfg);
  Dram dram;
  constexpr uint32_t kSegs = 8, kBytes = 4096;
  isa::Program p = segments_copy(dram, kSegs, kBytes, cfg);
  p.id = 1003;  // as the kernel driver's program cache hands it out
  const std::vector<uint32_t> points = isa::safe_points(p.cmds);
  ASSERT_EQ(points.size(), kSegs);
  // run_stopping() on one thread; its resume_at.
  const auto run = [&](uint32_t begin, int nth) {
    const JobResult r = run_stopping(dev, p, dram.mmu, HostLanes::Off, begin, nth);
    EXPECT_EQ(r.status, DRM_NPU_JOB_OK);
    return r.resume_at;
  };
  // First from a resumed begin (the device keeps these points: 5 of them, relative to it),
  // then from the start (7: the 8th is followed by END; the 6th is asked for), then the rest.
  EXPECT_EQ(run(points[1] + 1, 0), points[2] + 1);
  std::fill(dram.at(1).begin(), dram.at(1).end(), std::byte{0});
  EXPECT_EQ(run(0, 5), points[5] + 1);
  EXPECT_EQ(run(points[5] + 1, 0), points[6] + 1);
  EXPECT_EQ(run(points[6] + 1, -1), 0u);
  EXPECT_EQ(dram.at(1), dram.at(0));
}

}  // namespace
}  // namespace npu::emu::testing
