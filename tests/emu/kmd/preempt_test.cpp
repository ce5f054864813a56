// Preemption at safe points (ISA 1.2 FENCE flag PREEMPT, API 1.4): a job stopped at a safe
// point and resumed later gives the bytes of an uninterrupted run, its cycles are those of the
// uninterrupted run plus the configured switch cost per preemption, and its profile and the
// device counters show the switches. The stress mode (scheduling.preempt_every_safe_point)
// stops every job at every safe point and scrambles SRAM in between; a command stream that
// keeps data in SRAM across a safe point is caught by it. Raw buffers without marks run to
// their end.
#include <algorithm>

#include "kmd_fixture.h"

namespace npu::emu::test {
namespace {

constexpr uint32_t kChunk = 64 * 1024;

/// Copies `segments` chunks of kChunk bytes from `src` to `dst` through SRAM, one chunk per
/// segment, with a safe point (or, `safe` false, a plain FENCE) between two segments.
std::vector<std::byte> segmented_copy(uint64_t src, uint64_t dst, uint32_t segments,
                                      bool safe = true) {
  isa::CommandBufferBuilder b;
  for (uint32_t k = 0; k < segments; ++k) {
    if (k > 0) safe ? b.safe_point() : b.fence();
    const uint64_t off = uint64_t{k} * kChunk;
    b.dma_load({.dram = src + off, .sram = 0, .elem_size = 1, .size = {kChunk, 1, 1}});
    b.sem_signal(NPU_ENGINE_DMA_IN, 0);
    b.sem_wait(NPU_ENGINE_DMA_OUT, 0);
    b.dma_store({.dram = dst + off, .sram = 0, .elem_size = 1, .size = {kChunk, 1, 1}});
  }
  return b.finish();
}

struct Profile {
  drm_npu_job_profile head{};
  std::vector<drm_npu_cmd_profile> cmds;
  size_t preempt_entries() const {
    return static_cast<size_t>(std::count_if(cmds.begin(), cmds.end(), [](const auto& c) {
      return c.opcode == DRM_NPU_PROFILE_PREEMPT;
    }));
  }
};

Profile job_profile(Client& c, uint32_t ctx, uint64_t seqno) {
  Profile p;
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_JOB_PROFILE;
  q.arg0 = ctx;
  q.arg1 = seqno;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  std::vector<std::byte> buf(q.size);
  q.data = reinterpret_cast<uintptr_t>(buf.data());
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), 0);
  std::memcpy(&p.head, buf.data(), sizeof(p.head));
  p.cmds.resize(p.head.num_cmds);
  std::memcpy(p.cmds.data(), buf.data() + sizeof(p.head), p.cmds.size() * sizeof(p.cmds[0]));
  return p;
}

/// One run of a segmented copy on `kmd`: the destination bytes, the WAIT and the profile.
struct CopyRun {
  std::vector<std::byte> out;
  drm_npu_wait wait{};
  Profile profile;
};

CopyRun run_copy(Kmd& kmd, const std::vector<std::byte>& input, uint32_t segments, bool safe,
                 std::vector<std::byte> (*make)(uint64_t, uint64_t, uint32_t,
                                                bool) = segmented_copy) {
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  const BoHandle src = c.upload(input);
  const BoHandle dst = c.bo(input.size());
  const auto job = make(src.va, dst.va, segments, safe);
  const BoHandle cmd = c.upload(job);
  uint64_t seqno = 0;
  CopyRun r;
  EXPECT_EQ(c.submit(ctx, cmd, job.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &seqno),
            0);
  EXPECT_EQ(c.wait(ctx, seqno, deadline_ms(20'000), &r.wait), 0);
  EXPECT_EQ(r.wait.status, DRM_NPU_JOB_OK);
  const std::byte* out = c.map(dst);
  r.out.assign(out, out + input.size());
  r.profile = job_profile(c, ctx, seqno);
  return r;
}

std::vector<std::byte> pattern(size_t n, uint32_t seed) {
  std::vector<std::byte> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = std::byte(x & 0xff);
  }
  return v;
}

isa::DeviceConfig stress_config() {
  isa::DeviceConfig cfg;
  cfg.scheduling.preempt_every_safe_point = true;
  cfg.scheduling.preempt_cycles = 777;
  return cfg;
}

TEST(KmdPreempt, EverySafePointStopsTheJobAndTheBytesAreTheSame) {
  constexpr uint32_t kSegments = 6;
  const auto input = pattern(size_t{kSegments} * kChunk, 1);
  Kmd plain;
  Kmd stress(stress_config());
  const CopyRun a = run_copy(plain, input, kSegments, true);
  const CopyRun b = run_copy(stress, input, kSegments, true);
  EXPECT_TRUE(a.out == input);
  EXPECT_TRUE(b.out == a.out) << "a preempted run must give the bytes of an uninterrupted one";

  // Five safe points, each a switch of 777 cycles on top of the uninterrupted run's cycles.
  EXPECT_EQ(a.profile.head.preemptions, 0u);
  EXPECT_EQ(b.profile.head.preemptions, kSegments - 1);
  EXPECT_EQ(b.wait.cycles, a.wait.cycles + (kSegments - 1) * 777u);
  EXPECT_EQ(b.profile.head.cycles, b.wait.cycles);
  EXPECT_EQ(b.profile.preempt_entries(), kSegments - 1);
  EXPECT_EQ(b.profile.cmds.size(), a.profile.cmds.size() + kSegments - 1);
  EXPECT_EQ(b.profile.head.dma_bytes_in, a.profile.head.dma_bytes_in);
  EXPECT_EQ(b.profile.head.busy_cycles[NPU_ENGINE_DMA_IN],
            a.profile.head.busy_cycles[NPU_ENGINE_DMA_IN]);
  // Each switch follows its safe point (a FENCE) and the next command starts after it.
  for (size_t i = 0; i < b.profile.cmds.size(); ++i) {
    const drm_npu_cmd_profile& e = b.profile.cmds[i];
    if (e.opcode != DRM_NPU_PROFILE_PREEMPT) continue;
    ASSERT_GT(i, 0u);
    EXPECT_EQ(b.profile.cmds[i - 1].opcode, NPU_OP_FENCE);
    EXPECT_EQ(b.profile.cmds[i - 1].cmd_index, e.cmd_index);
    EXPECT_EQ(e.start_cycle, b.profile.cmds[i - 1].end_cycle);
    EXPECT_EQ(e.end_cycle - e.start_cycle, 777u);
    ASSERT_LT(i + 1, b.profile.cmds.size());
    EXPECT_GE(b.profile.cmds[i + 1].start_cycle, e.end_cycle);
    EXPECT_EQ(b.profile.cmds[i + 1].cmd_index, e.cmd_index + 1);
  }

  Client c(stress);
  drm_npu_counters k{};
  ASSERT_EQ(c.query(DRM_NPU_QUERY_COUNTERS, &k), 0);
  EXPECT_EQ(k.preemptions, kSegments - 1);
  EXPECT_EQ(k.preempt_cycles, (kSegments - 1) * 777u);
  EXPECT_EQ(k.jobs_completed, 1u);
  EXPECT_EQ(k.jobs_submitted, 1u);
  EXPECT_EQ(k.total_cycles, b.wait.cycles);
}

TEST(KmdPreempt, RawBufferWithoutSafePointsRunsToItsEnd) {
  constexpr uint32_t kSegments = 4;
  const auto input = pattern(size_t{kSegments} * kChunk, 2);
  Kmd stress(stress_config());
  const CopyRun r = run_copy(stress, input, kSegments, /*safe=*/false);
  EXPECT_TRUE(r.out == input);
  EXPECT_EQ(r.profile.head.preemptions, 0u);
  EXPECT_EQ(r.profile.preempt_entries(), 0u);
}

// Data kept in SRAM across a safe point breaks the safe point's promise: the stress mode, which
// plays another job in between, changes the result (the check the conformance run relies on).
std::vector<std::byte> live_across(uint64_t src, uint64_t dst, uint32_t /*segments*/, bool) {
  isa::CommandBufferBuilder b;
  b.dma_load({.dram = src, .sram = 0, .elem_size = 1, .size = {kChunk, 1, 1}});
  b.safe_point();
  b.dma_store({.dram = dst, .sram = 0, .elem_size = 1, .size = {kChunk, 1, 1}});
  return b.finish();
}

TEST(KmdPreempt, StressModeCatchesSramKeptAcrossASafePoint) {
  const auto input = pattern(kChunk, 3);
  Kmd plain;
  Kmd stress(stress_config());
  const CopyRun a = run_copy(plain, input, 1, true, live_across);
  const CopyRun b = run_copy(stress, input, 1, true, live_across);
  EXPECT_TRUE(a.out == input);
  EXPECT_EQ(b.profile.head.preemptions, 1u);
  EXPECT_FALSE(b.out == input) << "the SRAM was scrambled between the two parts";
}

// Equal priorities take turns at safe points once a job has used its time slice: two NORMAL
// jobs queued together alternate segment by segment (a 1-cycle slice), and both give the
// bytes of an uninterrupted run. A blocker (a hung job the watchdog ends) holds the device
// until both are queued.
TEST(KmdPreempt, EqualPrioritiesTakeTurnsByTimeSlice) {
  constexpr uint32_t kSegments = 3;
  isa::DeviceConfig cfg = config_with_watchdog(200);
  cfg.scheduling.time_slice_cycles = 1;
  cfg.scheduling.preempt_cycles = 100;
  Kmd kmd(cfg);
  Client c(kmd);
  const uint32_t blocker = c.ctx(DRM_NPU_PRIORITY_REALTIME);
  const auto hung = hung_job();
  const BoHandle h = c.upload(hung);
  ASSERT_EQ(c.submit(blocker, h, hung.size(), {ref(h, kR)}, kHangFlags), 0);

  const auto in1 = pattern(size_t{kSegments} * kChunk, 4);
  const auto in2 = pattern(size_t{kSegments} * kChunk, 5);
  struct Tenant {
    uint32_t ctx;
    BoHandle src, dst, cmd;
    std::vector<std::byte> job;
    uint64_t seqno = 0;
  };
  std::vector<Tenant> t;
  for (const auto* in : {&in1, &in2}) {
    Tenant x{c.ctx(), c.upload(*in), c.bo(in->size()), {}, {}};
    x.job = segmented_copy(x.src.va, x.dst.va, kSegments);
    x.cmd = c.upload(x.job);
    ASSERT_EQ(c.submit(x.ctx, x.cmd, x.job.size(), {ref(x.cmd, kR), ref(x.src, kR), ref(x.dst, kW)},
                       0, &x.seqno),
              0);
    t.push_back(x);
  }
  drm_npu_wait w1{}, w2{};
  ASSERT_EQ(c.wait(t[0].ctx, t[0].seqno, deadline_ms(20'000), &w1), 0);
  ASSERT_EQ(c.wait(t[1].ctx, t[1].seqno, deadline_ms(20'000), &w2), 0);
  ASSERT_EQ(w1.status, DRM_NPU_JOB_OK);
  ASSERT_EQ(w2.status, DRM_NPU_JOB_OK);
  const std::byte* o1 = c.map(t[0].dst);
  const std::byte* o2 = c.map(t[1].dst);
  EXPECT_TRUE(std::equal(in1.begin(), in1.end(), o1));
  EXPECT_TRUE(std::equal(in2.begin(), in2.end(), o2));
  // Each yields at both its safe points: the other one is ready each time (the first job's
  // last part runs while the second waits for its own last part).
  const Profile p1 = job_profile(c, t[0].ctx, t[0].seqno);
  const Profile p2 = job_profile(c, t[1].ctx, t[1].seqno);
  EXPECT_EQ(p1.head.preemptions, 2u);
  EXPECT_EQ(p2.head.preemptions, 2u);
  EXPECT_EQ(p1.preempt_entries(), 2u);
  EXPECT_EQ(w1.cycles, w2.cycles) << "the same work and the same switches";
  EXPECT_LT(w1.end_ns, w2.end_ns);
}

TEST(KmdPreempt, WithoutPreemptionEqualPrioritiesRunWholeJobs) {
  isa::DeviceConfig cfg = config_with_watchdog(200);
  cfg.scheduling.time_slice_cycles = 1;
  cfg.scheduling.preemption = false;
  Kmd kmd(cfg);
  Client c(kmd);
  drm_npu_get_param gp{};
  gp.param = DRM_NPU_PARAM_CAPABILITIES;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, &gp), 0);
  EXPECT_EQ(gp.value & DRM_NPU_CAP_PREEMPTION, 0u);
  const uint32_t blocker = c.ctx(DRM_NPU_PRIORITY_REALTIME);
  const auto hung = hung_job();
  const BoHandle h = c.upload(hung);
  ASSERT_EQ(c.submit(blocker, h, hung.size(), {ref(h, kR)}, kHangFlags), 0);
  const auto in = pattern(size_t{3} * kChunk, 6);
  const BoHandle src = c.upload(in);
  const BoHandle dst = c.bo(in.size());
  const auto job = segmented_copy(src.va, dst.va, 3);
  const BoHandle cmd = c.upload(job);
  const uint32_t a = c.ctx(), b = c.ctx();
  uint64_t sa = 0, sb = 0;
  ASSERT_EQ(c.submit(a, cmd, job.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &sa), 0);
  ASSERT_EQ(c.submit(b, cmd, job.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &sb), 0);
  ASSERT_EQ(c.wait(b, sb, deadline_ms(20'000)), 0);
  ASSERT_EQ(c.wait(a, sa, deadline_ms(20'000)), 0);
  EXPECT_EQ(job_profile(c, a, sa).head.preemptions, 0u);
  EXPECT_EQ(job_profile(c, b, sb).head.preemptions, 0u);
}

// A job of higher priority that becomes ready while a long job runs takes the device at the
// long job's next safe point. When the job becomes ready is up to the host (a SUBMIT while the
// long job runs), so the long job is made long enough in host time for the SUBMIT to land
// while it runs, and the test retries with a longer one if the host was slower than that.
TEST(KmdPreempt, HigherPriorityTakesTheDeviceAtTheNextSafePoint) {
  Kmd kmd;
  Client c(kmd);
  const uint32_t low = c.ctx(DRM_NPU_PRIORITY_NORMAL);
  const uint32_t high = c.ctx(DRM_NPU_PRIORITY_HIGH);
  const auto small_in = pattern(kChunk, 7);
  const BoHandle ssrc = c.upload(small_in);
  const BoHandle sdst = c.bo(kChunk);
  const auto small = segmented_copy(ssrc.va, sdst.va, 1);
  const BoHandle scmd = c.upload(small);
  const std::vector<drm_npu_bo_ref> srefs{ref(scmd, kR), ref(ssrc, kR), ref(sdst, kW)};

  for (uint32_t segments = 256, attempt = 0; attempt < 4; ++attempt, segments *= 2) {
    const auto in = pattern(size_t{segments} * kChunk / 8, 8);  // chunks overlap: 8x reuse
    const BoHandle src = c.upload(in);
    const BoHandle dst = c.bo(size_t{segments} * kChunk);
    // Every segment copies the same source chunk k % 8 (the input stays small).
    isa::CommandBufferBuilder b;
    for (uint32_t k = 0; k < segments; ++k) {
      if (k > 0) b.safe_point();
      const uint64_t s = src.va + uint64_t{k % (segments / 8)} * kChunk;
      b.dma_load({.dram = s, .sram = 0, .elem_size = 1, .size = {kChunk, 1, 1}});
      b.sem_signal(NPU_ENGINE_DMA_IN, 0);
      b.sem_wait(NPU_ENGINE_DMA_OUT, 0);
      b.dma_store({.dram = dst.va + uint64_t{k} * kChunk,
                   .sram = 0,
                   .elem_size = 1,
                   .size = {kChunk, 1, 1}});
    }
    const auto job = b.finish();
    const BoHandle cmd = c.upload(job);
    uint64_t long_seqno = 0, high_seqno = 0;
    ASSERT_EQ(
        c.submit(low, cmd, job.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &long_seqno),
        0);
    // The long job runs once its first segment's bytes arrive (the input's last byte of chunk
    // 0 is not 0); then the high-priority job becomes ready.
    const auto* first = reinterpret_cast<const volatile uint8_t*>(c.map(dst));
    const auto want = static_cast<uint8_t>(in[kChunk - 1]);
    ASSERT_NE(want, 0u);
    const int64_t give_up = deadline_ms(20'000);
    while (first[kChunk - 1] != want && now_ns() < give_up) {
    }
    ASSERT_EQ(c.submit(high, scmd, small.size(), srefs, 0, &high_seqno), 0);
    drm_npu_wait wl{}, wh{};
    ASSERT_EQ(c.wait(high, high_seqno, deadline_ms(60'000), &wh), 0);
    ASSERT_EQ(c.wait(low, long_seqno, deadline_ms(60'000), &wl), 0);
    ASSERT_EQ(wl.status, DRM_NPU_JOB_OK);
    ASSERT_EQ(wh.status, DRM_NPU_JOB_OK);
    const std::byte* out = c.map(dst);
    for (uint32_t k = 0; k < segments; ++k) {
      ASSERT_EQ(std::memcmp(out + size_t{k} * kChunk,
                            in.data() + size_t{k % (segments / 8)} * kChunk, kChunk),
                0)
          << "segment " << k;
    }
    // The SUBMIT must have landed while the long job ran (not before the runner took it, nor
    // in its last segment); else try again with a longer one.
    if (wh.submit_ns < wl.start_ns || wh.start_ns > wl.end_ns) continue;
    const Profile p = job_profile(c, low, long_seqno);
    EXPECT_EQ(p.head.preemptions, 1u);
    EXPECT_LT(wh.end_ns, wl.end_ns) << "the high-priority job ran inside the long one";
    EXPECT_EQ(wl.cycles, p.head.cycles);
    return;
  }
  FAIL() << "the long job always ended before the high-priority SUBMIT";
}

}  // namespace
}  // namespace npu::emu::test
