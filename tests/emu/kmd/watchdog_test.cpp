// The watchdog: a hung job is reset, its context banned; other contexts keep working.
// Also the scheduler's priority and round-robin order, observed while a hung job holds the
// device so that everything is queued before anything runs.
#include <algorithm>
#include <string>

#include "kmd_fixture.h"
#include "npu/isa/opcodes.h"

namespace npu::emu::test {
namespace {

TEST(KmdWatchdog, HungJobIsResetAndOnlyItsContextIsBanned) {
  Kmd kmd(config_with_watchdog(200));
  Client a(kmd);
  Client b(kmd);
  const uint32_t hung_ctx = a.ctx();
  const uint32_t good_ctx = b.ctx();

  const auto hung = hung_job();
  const BoHandle h = a.upload(hung);
  uint64_t hung_seqno = 0, hung_next = 0;
  ASSERT_EQ(a.submit(hung_ctx, h, hung.size(), {ref(h, kR)}, kHangFlags, &hung_seqno), 0);
  ASSERT_EQ(a.submit(hung_ctx, h, hung.size(), {ref(h, kR)}, kHangFlags, &hung_next), 0);

  const BoHandle src = b.bo(4096);
  const BoHandle dst = b.bo(4096);
  std::byte* in = b.map(src);
  std::byte* out = b.map(dst);
  const auto job = copy_job(src.va, dst.va, 4096);
  const BoHandle cmd = b.upload(job);
  auto run_good = [&](uint8_t pattern) {
    std::memset(in, pattern, 4096);
    uint64_t seqno = 0;
    ASSERT_EQ(
        b.submit(good_ctx, cmd, job.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &seqno),
        0);
    drm_npu_wait w{};
    ASSERT_EQ(b.wait(good_ctx, seqno, deadline_ms(10000), &w), 0);
    ASSERT_EQ(w.status, DRM_NPU_JOB_OK);
    for (int i = 0; i < 4096; ++i) ASSERT_EQ(out[i], std::byte{pattern});
  };
  run_good(0x11);  // queued behind the hung job: completes after the reset

  drm_npu_wait w{};
  ASSERT_EQ(a.wait(hung_ctx, hung_seqno, deadline_ms(10000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(w.fault.kind, DRM_NPU_FAULT_WATCHDOG);
  EXPECT_GE(w.end_ns - w.start_ns, 200'000'000u);
  ASSERT_EQ(a.wait(hung_ctx, hung_next, deadline_ms(10000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_ABORTED);

  const auto s = a.ctx_state(hung_ctx);
  EXPECT_EQ(s.state, DRM_NPU_CTX_STATE_BANNED);
  EXPECT_EQ(s.reset_count, 1u);
  EXPECT_EQ(s.fault_seqno, hung_seqno);
  EXPECT_EQ(s.last_fault.kind, DRM_NPU_FAULT_WATCHDOG);
  EXPECT_EQ(s.last_completed, hung_next);
  EXPECT_EQ(a.submit(hung_ctx, h, hung.size(), {ref(h, kR)}, kHangFlags), ECANCELED);

  // The device keeps serving: the other context, and a new context of the guilty file.
  run_good(0x22);
  run_good(0x33);
  EXPECT_EQ(b.ctx_state(good_ctx).state, DRM_NPU_CTX_STATE_ACTIVE);
  const uint32_t fresh = a.ctx();
  const auto empty = empty_job();
  const BoHandle e = a.upload(empty);
  uint64_t seqno = 0;
  ASSERT_EQ(a.submit(fresh, e, empty.size(), {ref(e, kR)}, 0, &seqno), 0);
  ASSERT_EQ(a.wait(fresh, seqno, deadline_ms(10000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_OK);

  drm_npu_counters k{};
  ASSERT_EQ(a.query(DRM_NPU_QUERY_COUNTERS, &k), 0);
  EXPECT_EQ(k.device_resets, 1u);
  EXPECT_EQ(k.jobs_faulted, 1u);
  EXPECT_EQ(k.jobs_completed, 4u);
}

// Issue 29: the watchdog's fault names the same command whatever the host threads did. Two
// engines race for one signal of semaphore 0 (only an unvalidated buffer can say this), so
// which of them is blocked when the reset comes depends on the threads; the blame does not:
// the oldest wait that never completes in the device's replay, vector's at command 2.
TEST(KmdWatchdog, BlameOfAHungJobIsTheSameEveryRun) {
  Kmd kmd(config_with_watchdog(20));
  Client c(kmd);
  isa::CommandBufferBuilder b;
  b.sem_signal(NPU_ENGINE_DMA_IN, 0);  // 0
  b.nop(NPU_ENGINE_VECTOR);            // 1
  b.sem_wait(NPU_ENGINE_VECTOR, 0);    // 2
  b.nop(NPU_ENGINE_MATRIX);            // 3
  b.nop(NPU_ENGINE_DMA_OUT);           // 4
  b.sem_wait(NPU_ENGINE_DMA_OUT, 0);   // 5
  const auto hung = b.finish();
  const BoHandle h = c.upload(hung);
  // Validated, the buffer cannot hang: the validator rejects it (docs/racecheck.md section 4),
  // so the watchdog only ever blames an unvalidated buffer's wait.
  EXPECT_EQ(c.submit(c.ctx(), h, hung.size(), {ref(h, kR)}), EINVAL);
  for (int run = 0; run < 20; ++run) {
    const uint32_t ctx = c.ctx();  // a fresh context each time: the last one was banned
    uint64_t seqno = 0;
    ASSERT_EQ(c.submit(ctx, h, hung.size(), {ref(h, kR)}, kHangFlags, &seqno), 0);
    drm_npu_wait w{};
    ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(10000), &w), 0);
    ASSERT_EQ(w.fault.kind, DRM_NPU_FAULT_WATCHDOG);
    EXPECT_EQ(std::string(isa::engine_name(static_cast<uint8_t>(w.fault.engine))) + " at command " +
                  std::to_string(w.fault.cmd_index),
              "vector at command 2")
        << "run " << run;
  }
}

TEST(KmdScheduler, PriorityThenRoundRobin) {
  Kmd kmd(config_with_watchdog(200));
  Client c(kmd);
  const uint32_t blocker = c.ctx(DRM_NPU_PRIORITY_REALTIME);
  const uint32_t low = c.ctx(DRM_NPU_PRIORITY_LOW);
  const uint32_t normal1 = c.ctx(DRM_NPU_PRIORITY_NORMAL);
  const uint32_t normal2 = c.ctx(DRM_NPU_PRIORITY_NORMAL);
  const uint32_t high = c.ctx(DRM_NPU_PRIORITY_HIGH);
  const auto hung = hung_job();
  const BoHandle h = c.upload(hung);
  const auto empty = empty_job();
  const BoHandle e = c.upload(empty);
  ASSERT_EQ(c.submit(blocker, h, hung.size(), {ref(h, kR)}, kHangFlags), 0);
  // Everything below queues while the hung job holds the device.
  for (uint32_t ctx : {low, normal1, normal2, high}) {
    for (int i = 0; i < 2; ++i) ASSERT_EQ(c.submit(ctx, e, empty.size(), {ref(e, kR)}), 0);
  }
  struct Ran {
    uint64_t start;
    uint32_t ctx;
    uint64_t seqno;
  };
  std::vector<Ran> order;
  for (uint32_t ctx : {low, normal1, normal2, high}) {
    for (uint64_t s = 1; s <= 2; ++s) {
      drm_npu_wait w{};
      ASSERT_EQ(c.wait(ctx, s, deadline_ms(10000), &w), 0);
      ASSERT_EQ(w.status, DRM_NPU_JOB_OK);
      order.push_back({w.start_ns, ctx, s});
    }
  }
  std::sort(order.begin(), order.end(),
            [](const Ran& x, const Ran& y) { return x.start < y.start; });
  const std::vector<std::pair<uint32_t, uint64_t>> expected = {
      {high, 1},    {high, 2},    {normal1, 1}, {normal2, 1},
      {normal1, 2}, {normal2, 2}, {low, 1},     {low, 2}};
  ASSERT_EQ(order.size(), expected.size());
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i].ctx, expected[i].first) << "position " << i;
    EXPECT_EQ(order[i].seqno, expected[i].second) << "position " << i;
  }
}

}  // namespace
}  // namespace npu::emu::test
