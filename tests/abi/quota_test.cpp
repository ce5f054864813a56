// Quotas and the priority policy (API 1.4, DRM_NPU_CAP_QUOTAS): QUERY QUOTA, and the refusals
// past each limit of a file — BO memory, contexts, jobs in flight — with EDQUOT; a REALTIME
// context without CAP_SYS_NICE is EPERM unless the node's allow-list says otherwise (the
// QUOTA flag). The limits are the node's: a test whose limit is too large to reach quickly
// skips, saying so.

#include "abi.h"
#include "npu/test/capabilities.h"

namespace npu::abi {
namespace {

using npu::test::WithoutCapSysNice;

drm_npu_quota quota(const File& f) {
  drm_npu_quota q{};
  drm_npu_query qu{};
  qu.type = DRM_NPU_QUERY_QUOTA;
  qu.size = sizeof(q);
  qu.data = reinterpret_cast<uintptr_t>(&q);
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_QUERY, &qu), 0);
  EXPECT_EQ(qu.size, sizeof(q));
  return q;
}

int create_bo(const File& f, uint64_t size) {
  drm_npu_bo_create c{};
  c.size = size;
  return f.io(DRM_IOCTL_NPU_BO_CREATE, &c);
}

TEST(AbiQuota, QueryReportsUseAgainstTheLimits) {
  NPU_ABI_REQUIRE(1, 4, DRM_NPU_CAP_QUOTAS);
  File f;
  const drm_npu_quota before = quota(f);
  EXPECT_EQ(before.bo_memory, 0u);
  EXPECT_EQ(before.contexts, 0u);
  EXPECT_EQ(before.jobs_in_flight, 0u);
  EXPECT_GT(before.bo_memory_limit, 0u);
  EXPECT_LE(before.bo_memory_limit, before.device_bo_memory_limit);
  EXPECT_GT(before.contexts_limit, 0u);
  EXPECT_GT(before.jobs_in_flight_limit, 0u);
  EXPECT_EQ(before.pad, 0u);
  f.bo(8192);
  f.ctx();
  const drm_npu_quota after = quota(f);
  EXPECT_EQ(after.bo_memory, 8192u);
  EXPECT_GE(after.device_bo_memory, 8192u);
  EXPECT_EQ(after.contexts, 1u);

  drm_npu_query bad{};
  bad.type = DRM_NPU_QUERY_QUOTA;
  bad.arg0 = 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_QUERY, &bad), EINVAL) << "arg0 must be 0";
}

TEST(AbiQuota, ContextsPastTheLimitAreEdquot) {
  NPU_ABI_REQUIRE(1, 4, DRM_NPU_CAP_QUOTAS);
  File f;
  const uint32_t limit = quota(f).contexts_limit;
  if (limit > 1024) GTEST_SKIP() << "the node's context limit " << limit << " is too large";
  for (uint32_t i = 0; i < limit; ++i) ASSERT_NE(f.ctx(), 0u) << "context " << i;
  drm_npu_ctx_create c{};
  c.priority = DRM_NPU_PRIORITY_NORMAL;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_CTX_CREATE, &c), EDQUOT);
  EXPECT_NE(f.last_error().find("context limit"), std::string::npos) << f.last_error();
  File other;  // the limit is per file
  EXPECT_NE(other.ctx(), 0u);
}

// Promising memory is refused before anything is touched: BOs of the largest size (lazily
// backed) until the file's limit.
TEST(AbiQuota, BoMemoryPastTheLimitIsEdquot) {
  NPU_ABI_REQUIRE(1, 4, DRM_NPU_CAP_QUOTAS);
  File f;
  const drm_npu_quota q = quota(f);
  const uint64_t size = std::min<uint64_t>(f.param(DRM_NPU_PARAM_MAX_BO_SIZE), q.bo_memory_limit);
  const uint64_t most = q.bo_memory_limit / size;
  if (most > 256) GTEST_SKIP() << "the node's BO memory limit is " << most << " maximal BOs";
  int err = 0;
  uint64_t made = 0;
  while (err == 0 && made <= most) {
    err = create_bo(f, size);
    if (err == 0) ++made;
  }
  EXPECT_EQ(err, EDQUOT) << "after " << made << " BOs of " << size << " bytes";
  EXPECT_LE(made, most);
  EXPECT_NE(f.last_error().find("bo memory limit"), std::string::npos) << f.last_error();
  EXPECT_EQ(quota(f).bo_memory, made * size);
}

// Behind a hung job everything queues: past the file's jobs-in-flight limit (over several
// contexts, each below its own queue's size) SUBMIT is EDQUOT; once the device moves on the
// jobs retire and SUBMIT works again. The hung job holds the device only until the node's
// watchdog resets it (300 ms on the CTS config): an attempt counts only if it was still hung
// when every check was done, else the queue drained under the test (a slow node: a sanitizer
// build through the daemon) and it tries again, with a new blocking context (the reset banned
// the old one: its SUBMITs are ECANCELED).
TEST(AbiQuota, JobsPastTheLimitAreEdquot) {
  NPU_ABI_REQUIRE(1, 4, DRM_NPU_CAP_QUOTAS);
  NPU_ABI_REQUIRE_HANG();
  File f;
  const drm_npu_quota q = quota(f);
  if (q.jobs_in_flight_limit > 8192) {
    GTEST_SKIP() << "the node's limit of jobs in flight " << q.jobs_in_flight_limit
                 << " is too large";
  }
  const bool rt = (q.flags & DRM_NPU_QUOTA_REALTIME) != 0;
  const auto hung = hung_job();
  const Bo h = f.upload(hung);
  const auto empty = empty_job();
  const Bo e = f.upload(empty);
  std::vector<uint32_t> ctxs;  // reused by the attempts: the file's context quota is finite
  constexpr int kAttempts = 4;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    // A context of its own each time: the watchdog bans the context of the job it resets.
    const uint32_t blocker = f.ctx(rt ? DRM_NPU_PRIORITY_REALTIME : DRM_NPU_PRIORITY_HIGH);
    uint64_t blocker_seqno = 0;
    ASSERT_EQ(f.submit(blocker, h, hung.size(), {ref(h, kR)}, DRM_NPU_SUBMIT_SKIP_VALIDATION,
                       &blocker_seqno),
              0);
    std::vector<std::pair<uint32_t, uint64_t>> last;  // per context: its last seqno
    int err = 0;
    uint64_t accepted = 1;  // the blocker
    for (size_t c = 0; err == 0 && accepted <= q.jobs_in_flight_limit; ++c) {
      if (c == ctxs.size()) ctxs.push_back(f.ctx());
      uint64_t seqno = 0;
      for (int i = 0; i < 512 && err == 0; ++i) {
        err = f.submit(ctxs[c], e, empty.size(), {ref(e, kR)}, 0, &seqno);
        if (err == 0) ++accepted;
      }
      if (seqno != 0) last.emplace_back(ctxs[c], seqno);
    }
    const std::string why = f.last_error();
    const uint64_t in_flight = quota(f).jobs_in_flight;
    const bool still_hung = f.wait(blocker, blocker_seqno, now_ns()) == ETIMEDOUT;
    // Every job retires (the blocker by the watchdog) before the next attempt or the end.
    drm_npu_wait w{};
    ASSERT_EQ(f.wait(blocker, blocker_seqno, deadline_ms(8 * kMaxWatchdogMs), &w), 0);
    for (const auto& [ctx, seqno] : last) {
      ASSERT_EQ(f.wait(ctx, seqno, deadline_ms(8 * kMaxWatchdogMs), &w), 0);
    }
    if (!still_hung) continue;  // the watchdog fired during the attempt: void
    EXPECT_EQ(err, EDQUOT) << "after " << accepted << " jobs";
    EXPECT_EQ(accepted, q.jobs_in_flight_limit);
    EXPECT_NE(why.find("jobs in flight"), std::string::npos) << why;
    EXPECT_EQ(in_flight, q.jobs_in_flight_limit);
    EXPECT_EQ(f.submit(last.front().first, e, empty.size(), {ref(e, kR)}), 0);
    return;
  }
  GTEST_SKIP() << "the node's watchdog (" << watchdog_ms() << " ms) reset the blocking job "
               << "before " << q.jobs_in_flight_limit << " SUBMITs were done, " << kAttempts
               << " times";
}

TEST(AbiPolicy, RealtimeWithoutCapSysNiceIsEperm) {
  NPU_ABI_REQUIRE(1, 4, DRM_NPU_CAP_QUOTAS);
  WithoutCapSysNice drop;
  if (!drop.unprivileged()) GTEST_SKIP() << "cannot drop CAP_SYS_NICE";
  File f;  // opened without the privilege
  if ((quota(f).flags & DRM_NPU_QUOTA_REALTIME) != 0) {
    GTEST_SKIP() << "the node allows REALTIME to this user (an allow-list)";
  }
  drm_npu_ctx_create c{};
  c.priority = DRM_NPU_PRIORITY_REALTIME;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_CTX_CREATE, &c), EPERM);
  c.priority = DRM_NPU_PRIORITY_HIGH;  // raised, not REALTIME: no privilege needed
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_CTX_CREATE, &c), 0);
}

TEST(AbiPolicy, QuotaFlagSaysWhetherRealtimeIsAllowed) {
  NPU_ABI_REQUIRE(1, 4, DRM_NPU_CAP_QUOTAS);
  File f;
  drm_npu_ctx_create c{};
  c.priority = DRM_NPU_PRIORITY_REALTIME;
  const int err = f.io(DRM_IOCTL_NPU_CTX_CREATE, &c);
  EXPECT_EQ(err, (quota(f).flags & DRM_NPU_QUOTA_REALTIME) != 0 ? 0 : EPERM);
}

}  // namespace
}  // namespace npu::abi
