// BO_WAIT (API 1.3): idle BOs, busy ones (poll, deadline), every context's jobs counted, the
// job ending by the watchdog, and the argument checks.
#include "kmd_fixture.h"

namespace npu::emu::test {
namespace {

int bo_wait(Client& c, uint32_t handle, int64_t deadline, uint32_t flags = 0) {
  drm_npu_bo_wait w{};
  w.handle = handle;
  w.flags = flags;
  w.timeout_ns = deadline;
  return c.io(DRM_IOCTL_NPU_BO_WAIT, &w);
}

TEST(KmdBoWait, IdleBoReturnsAtOnce) {
  Kmd kmd;
  Client c(kmd);
  const BoHandle b = c.bo(4096);
  EXPECT_EQ(bo_wait(c, b.handle, 0), 0);
  EXPECT_EQ(bo_wait(c, b.handle, deadline_ms(1000)), 0);
}

TEST(KmdBoWait, ArgumentsAreChecked) {
  Kmd kmd;
  Client c(kmd);
  const BoHandle b = c.bo(4096);
  EXPECT_EQ(bo_wait(c, 0, 0), ENOENT);
  EXPECT_EQ(bo_wait(c, b.handle + 7, 0), ENOENT);
  EXPECT_EQ(bo_wait(c, b.handle, 0, 1), EINVAL);
  EXPECT_EQ(bo_wait(c, b.handle, -1), EINVAL);
  // Another file's handle is unknown here.
  Client other(kmd);
  EXPECT_EQ(bo_wait(other, b.handle, 0), ENOENT);
}

// A hung job on one context holds the BO busy for every waiter, whichever context asks,
// until the watchdog ends it; a BO the job does not list stays idle meanwhile.
TEST(KmdBoWait, BusyUntilTheJobUsingItEnds) {
  Kmd kmd(config_with_watchdog(200));
  Client c(kmd);
  const uint32_t hung_ctx = c.ctx();
  const uint32_t other_ctx = c.ctx();
  const auto hung = hung_job();
  const BoHandle h = c.upload(hung);
  const BoHandle data = c.bo(4096);
  const BoHandle unused = c.bo(4096);
  uint64_t seqno = 0;
  ASSERT_EQ(c.submit(hung_ctx, h, hung.size(), {ref(h, kR), ref(data, kRW)}, kHangFlags, &seqno),
            0);
  EXPECT_EQ(bo_wait(c, data.handle, 0), EBUSY);
  EXPECT_EQ(bo_wait(c, h.handle, 0), EBUSY);
  EXPECT_EQ(bo_wait(c, data.handle, deadline_ms(20)), ETIMEDOUT);
  EXPECT_EQ(bo_wait(c, unused.handle, 0), 0);
  // The job's end (the watchdog's reset) makes the BO idle; the wait sees it.
  EXPECT_EQ(bo_wait(c, data.handle, deadline_ms(10'000)), 0);
  drm_npu_wait w{};
  ASSERT_EQ(c.wait(hung_ctx, seqno, 0, &w), 0);
  EXPECT_EQ(w.fault.kind, DRM_NPU_FAULT_WATCHDOG);
  EXPECT_EQ(bo_wait(c, h.handle, 0), 0);
  // Queued behind a hung job on another context, a job holds its BOs busy too.
  const uint32_t blocker = c.ctx(DRM_NPU_PRIORITY_REALTIME);
  ASSERT_EQ(c.submit(blocker, h, hung.size(), {ref(h, kR)}, kHangFlags), 0);
  const auto copy = copy_job(data.va, unused.va, 64);
  const BoHandle cb = c.upload(copy);
  ASSERT_EQ(c.submit(other_ctx, cb, copy.size(), {ref(cb, kR), ref(data, kR), ref(unused, kW)}), 0);
  EXPECT_EQ(bo_wait(c, unused.handle, 0), EBUSY);
  EXPECT_EQ(bo_wait(c, unused.handle, deadline_ms(10'000)), 0);
}

// Closing the handle while a job uses the BO: the memory lives on, and BO_WAIT on the closed
// handle is ENOENT (the handle, not the memory, is what the call names).
TEST(KmdBoWait, ClosedHandleIsUnknown) {
  Kmd kmd(config_with_watchdog(100));
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  const auto hung = hung_job();
  const BoHandle h = c.upload(hung);
  ASSERT_EQ(c.submit(ctx, h, hung.size(), {ref(h, kR)}, kHangFlags), 0);
  drm_npu_bo_close cl{};
  cl.handle = h.handle;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_BO_CLOSE, &cl), 0);
  EXPECT_EQ(bo_wait(c, h.handle, 0), ENOENT);
}

}  // namespace
}  // namespace npu::emu::test
