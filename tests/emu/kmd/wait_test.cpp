// WAIT: success, poll, timeout, unknown seqnos, the retention window, CTX_DESTROY and close.
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/ringbuffer_sink.h>

#include <sstream>
#include <thread>

#include "kmd_fixture.h"
#include "log.h"

namespace npu::emu::test {
namespace {

struct EmptyJob {
  explicit EmptyJob(Client& c) : bytes(empty_job()), bo(c.upload(bytes)) {}
  std::vector<std::byte> bytes;
  BoHandle bo;
};

TEST(KmdWait, EmptyJobRetiresOk) {
  Kmd kmd;
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  EmptyJob e(c);
  uint64_t seqno = 0;
  ASSERT_EQ(c.submit(ctx, e.bo, e.bytes.size(), {ref(e.bo, kR)}, 0, &seqno), 0);
  drm_npu_wait w{};
  ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(5000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_OK);
  EXPECT_EQ(w.fault.kind, DRM_NPU_FAULT_NONE);
  EXPECT_GT(w.submit_ns, 0u);
  EXPECT_LE(w.submit_ns, w.start_ns);
  EXPECT_LE(w.start_ns, w.end_ns);
  EXPECT_LE(w.end_ns, static_cast<uint64_t>(now_ns()));
  // A retired job can be polled and waited for again.
  EXPECT_EQ(c.wait(ctx, seqno, 0, &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_OK);
  EXPECT_EQ(c.ctx_state(ctx).last_completed, seqno);
}

/// Submits and waits for `rounds` empty jobs, each after the runner has gone idle, and returns
/// how many of them ran on the waiting thread (from the driver's "run ctx" trace lines, which
/// carry the thread id).
int jobs_run_by_waiter(Kmd& kmd, int rounds, int64_t (*deadline)()) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(static_cast<size_t>(rounds) * 4);
  sink->set_formatter(std::make_unique<spdlog::pattern_formatter>("%t %v"));
  kmd::log().sinks().push_back(sink);
  const auto level = kmd::log().level();
  kmd::log().set_level(spdlog::level::trace);
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  EmptyJob e(c);
  for (int i = 0; i < rounds; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(500));  // the runner parks
    uint64_t seqno = 0;
    EXPECT_EQ(c.submit(ctx, e.bo, e.bytes.size(), {ref(e.bo, kR)}, 0, &seqno), 0);
    drm_npu_wait w{};
    EXPECT_EQ(c.wait(ctx, seqno, deadline(), &w), 0);
    EXPECT_EQ(w.status, DRM_NPU_JOB_OK);
  }
  const auto lines = sink->last_formatted();
  kmd::log().sinks().pop_back();
  kmd::log().set_level(level);
  std::ostringstream me;
  me << spdlog::details::os::thread_id();
  int runs = 0, mine = 0;
  for (const std::string& l : lines) {
    if (l.find(" run ctx ") == std::string::npos) continue;
    ++runs;
    mine += l.rfind(me.str() + " ", 0) == 0;
  }
  EXPECT_EQ(runs, rounds);
  return mine;
}

// A WAIT without a deadline for the next job while the device idles runs the job on the
// waiting thread (no hand-off to the runner and back). The runner may still win the race for
// one job; over many it does not win every one.
TEST(KmdWait, WaiterRunsTheNextJobWhenTheDeviceIdles) {
  Kmd kmd;
  EXPECT_GT(jobs_run_by_waiter(kmd, 100, [] { return std::numeric_limits<int64_t>::max(); }), 0);
}

// A deadline the job could outlive (inside 1.5 watchdog periods) is never risked: the runner
// runs the job and the WAIT sleeps, so it can return at its deadline.
TEST(KmdWait, WaiterWithANearDeadlineLeavesTheJobToTheRunner) {
  Kmd kmd(config_with_watchdog(60'000));
  EXPECT_EQ(jobs_run_by_waiter(kmd, 50, [] { return deadline_ms(5000); }), 0);
}

TEST(KmdWait, ArgumentErrors) {
  Kmd kmd;
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  EmptyJob e(c);
  uint64_t seqno = 0;
  ASSERT_EQ(c.submit(ctx, e.bo, e.bytes.size(), {ref(e.bo, kR)}, 0, &seqno), 0);
  drm_npu_wait w{};
  w.ctx_id = ctx;
  w.seqno = seqno;
  w.timeout_ns = deadline_ms(5000);
  w.flags = 1;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_WAIT, &w), EINVAL);
  w.flags = 0;
  w.pad = 1;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_WAIT, &w), EINVAL);
  w.pad = 0;
  w.timeout_ns = -1;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_WAIT, &w), EINVAL);
  EXPECT_EQ(c.wait(ctx, 0, deadline_ms(10)), ENOENT);          // never handed out
  EXPECT_EQ(c.wait(ctx, seqno + 1, deadline_ms(10)), ENOENT);  // not yet handed out
  EXPECT_EQ(c.wait(ctx + 1, seqno, deadline_ms(10)), ENOENT);  // unknown context
  EXPECT_EQ(c.wait(ctx, seqno, deadline_ms(5000)), 0);
}

// A job that hangs until the watchdog (1 s) resets it gives the poll and the timeout a
// window in which the job is certainly still pending.
TEST(KmdWait, PollIsEbusyAndDeadlineIsEtimedout) {
  Kmd kmd(config_with_watchdog(1000));
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  const auto hung = hung_job();
  const BoHandle h = c.upload(hung);
  uint64_t seqno = 0;
  ASSERT_EQ(c.submit(ctx, h, hung.size(), {ref(h, kR)}, kHangFlags, &seqno), 0);
  drm_npu_wait w{};
  EXPECT_EQ(c.wait(ctx, seqno, 0, &w), EBUSY);
  EXPECT_EQ(w.status, DRM_NPU_JOB_TIMEOUT);
  const int64_t t0 = now_ns();
  EXPECT_EQ(c.wait(ctx, seqno, deadline_ms(20), &w), ETIMEDOUT);
  EXPECT_EQ(w.status, DRM_NPU_JOB_TIMEOUT);
  EXPECT_GE(now_ns() - t0, 20'000'000 - 1'000'000);
  EXPECT_EQ(c.wait(ctx, seqno, 1, &w), ETIMEDOUT);  // a deadline in the past
  // The watchdog ends it.
  ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(10000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_ERROR);
  EXPECT_EQ(w.fault.kind, DRM_NPU_FAULT_WATCHDOG);
}

TEST(KmdWait, RetentionWindow) {
  Kmd kmd;
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  EmptyJob e(c);
  constexpr uint64_t kJobs = 1024 + 6;
  uint64_t last = 0;
  for (uint64_t i = 1; i <= kJobs; ++i) {
    int r = c.submit(ctx, e.bo, e.bytes.size(), {ref(e.bo, kR)}, 0, &last);
    if (r == ENOMEM) {  // the ring is full of pending jobs: wait for the oldest one
      ASSERT_EQ(c.wait(ctx, i - 1024, deadline_ms(10000)), 0);
      r = c.submit(ctx, e.bo, e.bytes.size(), {ref(e.bo, kR)}, 0, &last);
    }
    ASSERT_EQ(r, 0);
    ASSERT_EQ(last, i);
  }
  ASSERT_EQ(c.wait(ctx, last, deadline_ms(10000)), 0);
  EXPECT_EQ(c.wait(ctx, 1, 0), ENOENT);
  EXPECT_EQ(c.wait(ctx, kJobs - 1024, 0), ENOENT);  // just out of the window
  EXPECT_EQ(c.wait(ctx, kJobs - 1023, 0), 0);       // the oldest job retained
  drm_npu_job_profile p{};
  EXPECT_EQ(c.query(DRM_NPU_QUERY_JOB_PROFILE, &p, ctx, 1), ENOENT);
  // Old jobs keep their statistics; only the last 64 keep the per-command timeline.
  ASSERT_EQ(c.query(DRM_NPU_QUERY_JOB_PROFILE, &p, ctx, kJobs - 1023), 0);
  EXPECT_EQ(p.seqno, kJobs - 1023);
  EXPECT_EQ(p.num_cmds, 0u);
  EXPECT_GT(p.cycles, 0u);
  ASSERT_EQ(c.query(DRM_NPU_QUERY_JOB_PROFILE, &p, ctx, kJobs - 63), 0);
  EXPECT_EQ(p.num_cmds, 1u);  // END
  ASSERT_EQ(c.query(DRM_NPU_QUERY_JOB_PROFILE, &p, ctx, kJobs - 64), 0);
  EXPECT_EQ(p.num_cmds, 0u);
}

// A hung job holds the device: the context's ring fills with queued jobs, the next SUBMIT
// gets ENOMEM; the watchdog then bans the context and its queued jobs are aborted.
TEST(KmdWait, QueueFullIsEnomemAndBanAbortsQueued) {
  Kmd kmd(config_with_watchdog(1000));
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  const auto hung = hung_job();
  const BoHandle h = c.upload(hung);
  EmptyJob e(c);
  uint64_t seqno = 0;
  ASSERT_EQ(c.submit(ctx, h, hung.size(), {ref(h, kR)}, kHangFlags, &seqno), 0);
  for (uint64_t i = 2; i <= 1024; ++i) {
    ASSERT_EQ(c.submit(ctx, e.bo, e.bytes.size(), {ref(e.bo, kR)}, 0, &seqno), 0);
  }
  EXPECT_EQ(c.submit(ctx, e.bo, e.bytes.size(), {ref(e.bo, kR)}), ENOMEM);
  drm_npu_wait w{};
  ASSERT_EQ(c.wait(ctx, 1024, deadline_ms(10000), &w), 0);
  EXPECT_EQ(w.status, DRM_NPU_JOB_ABORTED);
  EXPECT_EQ(w.start_ns, 0u);  // never ran
  ASSERT_EQ(c.wait(ctx, 1, 0, &w), 0);
  EXPECT_EQ(w.fault.kind, DRM_NPU_FAULT_WATCHDOG);
  EXPECT_EQ(c.ctx_state(ctx).last_completed, 1024u);
}

TEST(KmdWait, CtxDestroyAbortsQueuedAndWaitsForRunning) {
  Kmd kmd(config_with_watchdog(300));
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  const auto hung = hung_job();
  const BoHandle h = c.upload(hung);
  EmptyJob e(c);
  uint64_t s1 = 0, s2 = 0;
  ASSERT_EQ(c.submit(ctx, h, hung.size(), {ref(h, kR)}, kHangFlags, &s1), 0);
  ASSERT_EQ(c.submit(ctx, e.bo, e.bytes.size(), {ref(e.bo, kR)}, 0, &s2), 0);
  drm_npu_wait w2{};
  int r2 = -1;
  std::thread waiter([&] { r2 = c.wait(ctx, s2, deadline_ms(10000), &w2); });
  EXPECT_EQ(c.destroy_ctx(ctx), 0);  // returns once the hung job was reset
  waiter.join();
  // The waiter either saw the abort, or looked the context up after it was destroyed.
  if (r2 == 0) {
    EXPECT_EQ(w2.status, DRM_NPU_JOB_ABORTED);
  } else {
    EXPECT_EQ(r2, ENOENT);
  }
  EXPECT_EQ(c.wait(ctx, s1, 0), ENOENT);
  EXPECT_EQ(c.submit(ctx, e.bo, e.bytes.size(), {ref(e.bo, kR)}), ENOENT);
  EXPECT_EQ(c.destroy_ctx(ctx), ENOENT);
  drm_npu_ctx_destroy d{};
  d.ctx_id = c.ctx();
  d.pad = 1;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_CTX_DESTROY, &d), EINVAL);
}

TEST(KmdWait, CloseWithJobsInFlight) {
  Kmd kmd(config_with_watchdog(300));
  const int fd = kmd.open();
  {
    Client c(kmd);  // a second file keeps working afterwards
    const uint32_t ctx = c.ctx();
    EmptyJob e(c);
    // The first file: a hung job and queued work, then close.
    {
      drm_npu_ctx_create cc{};
      ASSERT_EQ(kmd.ioctl(fd, DRM_IOCTL_NPU_CTX_CREATE, &cc), 0);
      drm_npu_bo_create bc{};
      const auto hung = hung_job();
      bc.size = hung.size();
      ASSERT_EQ(kmd.ioctl(fd, DRM_IOCTL_NPU_BO_CREATE, &bc), 0);
      drm_npu_bo_info bi{};
      bi.handle = bc.handle;
      ASSERT_EQ(kmd.ioctl(fd, DRM_IOCTL_NPU_BO_INFO, &bi), 0);
      void* p = kmd.mmap(nullptr, bi.size, PROT_WRITE, MAP_SHARED, fd, bi.mmap_offset);
      ASSERT_NE(p, MAP_FAILED);
      std::memcpy(p, hung.data(), hung.size());
      kmd.munmap(p, bi.size);
      drm_npu_bo_ref r{bc.handle, kR};
      drm_npu_submit s{};
      s.ctx_id = cc.ctx_id;
      s.flags = kHangFlags;
      s.cmd_handle = bc.handle;
      s.bo_count = 1;
      s.cmd_size = hung.size();
      s.bos = reinterpret_cast<uintptr_t>(&r);
      ASSERT_EQ(kmd.ioctl(fd, DRM_IOCTL_NPU_SUBMIT, &s), 0);
      ASSERT_EQ(kmd.ioctl(fd, DRM_IOCTL_NPU_SUBMIT, &s), 0);
    }
    ASSERT_EQ(kmd.close(fd), 0);
    uint64_t seqno = 0;
    ASSERT_EQ(c.submit(ctx, e.bo, e.bytes.size(), {ref(e.bo, kR)}, 0, &seqno), 0);
    drm_npu_wait w{};
    ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(10000), &w), 0);
    EXPECT_EQ(w.status, DRM_NPU_JOB_OK);
  }
}

}  // namespace
}  // namespace npu::emu::test
