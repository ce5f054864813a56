// Quotas and the priority policy (API 1.4): per-file BO memory, contexts and jobs in flight,
// the device's BO memory, each refused with EDQUOT and a reason naming the limit (QUERY
// LAST_ERROR); QUERY QUOTA reports use against the limits; REALTIME contexts need the
// privilege (Kmd::Opener: CAP_SYS_NICE or an allow-list), EPERM otherwise.
#include <string>

#include "kmd_fixture.h"

namespace npu::emu::test {
namespace {

drm_npu_quota quota(Client& c) {
  drm_npu_quota q{};
  EXPECT_EQ(c.query(DRM_NPU_QUERY_QUOTA, &q), 0);
  return q;
}

int create_bo(Client& c, uint64_t size, uint32_t* handle = nullptr) {
  drm_npu_bo_create b{};
  b.size = size;
  const int r = c.io(DRM_IOCTL_NPU_BO_CREATE, &b);
  if (handle != nullptr) *handle = b.handle;
  return r;
}

TEST(KmdQuota, BoMemoryOfAFileIsBounded) {
  isa::DeviceConfig cfg;
  cfg.quota.bo_memory = 64 * 1024;
  Kmd kmd(cfg);
  Client c(kmd);
  uint32_t first = 0;
  ASSERT_EQ(create_bo(c, 48 * 1024, &first), 0);
  ASSERT_EQ(create_bo(c, 16 * 1024), 0);
  EXPECT_EQ(create_bo(c, 4096), EDQUOT);
  const std::string why = c.last_error();
  EXPECT_NE(why.find("bo memory limit 65536"), std::string::npos) << why;
  EXPECT_NE(why.find("bo_create"), std::string::npos) << why;

  drm_npu_quota q = quota(c);
  EXPECT_EQ(q.bo_memory, 64u * 1024);
  EXPECT_EQ(q.bo_memory_limit, 64u * 1024);
  EXPECT_GE(q.device_bo_memory, 64u * 1024);

  // Another file has its own allowance; closing a BO gives the bytes back.
  Client other(kmd);
  EXPECT_EQ(create_bo(other, 64 * 1024), 0);
  drm_npu_bo_close cl{};
  cl.handle = first;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_BO_CLOSE, &cl), 0);
  EXPECT_EQ(create_bo(c, 48 * 1024), 0);
  EXPECT_EQ(quota(c).bo_memory, 64u * 1024);
}

TEST(KmdQuota, DeviceBoMemoryIsBoundedForAllFiles) {
  isa::DeviceConfig cfg;
  cfg.quota.bo_memory = 1 << 20;
  cfg.quota.device_bo_memory = 128 * 1024;
  Kmd kmd(cfg);
  Client a(kmd);
  Client b(kmd);
  ASSERT_EQ(create_bo(a, 96 * 1024), 0);
  EXPECT_EQ(create_bo(b, 64 * 1024), EDQUOT);
  const std::string why = b.last_error();
  EXPECT_NE(why.find("the device's bo memory limit 131072"), std::string::npos) << why;
  EXPECT_EQ(create_bo(b, 32 * 1024), 0);
  EXPECT_EQ(quota(b).device_bo_memory, 128u * 1024);
  EXPECT_EQ(quota(b).device_bo_memory_limit, 128u * 1024);
  EXPECT_EQ(kmd.device_bo_memory(), 128u * 1024);
}

TEST(KmdQuota, TheDefaultsPromiseNoMoreThanTheMachineHas) {
  Kmd kmd;
  Client c(kmd);
  const drm_npu_quota q = quota(c);
  EXPECT_GT(q.bo_memory_limit, 0u);
  EXPECT_LE(q.bo_memory_limit, q.device_bo_memory_limit);
  // 64 BOs of the largest size (1 GiB by default) are more than the machine may promise
  // (docs/uapi.md: a file holds at most half the physical memory): SUBMIT-free BO_CREATEs stop
  // with EDQUOT before 64 (lazily backed, so nothing is touched).
  drm_npu_get_param gp{};
  gp.param = DRM_NPU_PARAM_MAX_BO_SIZE;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, &gp), 0);
  int err = 0;
  uint64_t made = 0;
  while (err == 0 && made <= q.bo_memory_limit / gp.value) {
    err = create_bo(c, gp.value);
    if (err == 0) ++made;
  }
  EXPECT_EQ(err, EDQUOT) << "after " << made << " BOs";
  EXPECT_LE(made * gp.value, q.bo_memory_limit);
}

TEST(KmdQuota, ContextsOfAFileAreBounded) {
  isa::DeviceConfig cfg;
  cfg.quota.contexts = 3;
  Kmd kmd(cfg);
  Client c(kmd);
  for (int i = 0; i < 3; ++i) c.ctx();
  drm_npu_ctx_create cc{};
  cc.priority = DRM_NPU_PRIORITY_NORMAL;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_CTX_CREATE, &cc), EDQUOT);
  const std::string why = c.last_error();
  EXPECT_NE(why.find("context limit 3"), std::string::npos) << why;
  const drm_npu_quota q = quota(c);
  EXPECT_EQ(q.contexts, 3u);
  EXPECT_EQ(q.contexts_limit, 3u);
  Client other(kmd);
  EXPECT_NE(other.ctx(), 0u);
}

// Jobs queued or running, all contexts of a file together; behind a hung job (the watchdog
// ends it) everything stays queued.
TEST(KmdQuota, JobsInFlightOfAFileAreBounded) {
  isa::DeviceConfig cfg = config_with_watchdog(200);
  cfg.quota.jobs_in_flight = 4;
  Kmd kmd(cfg);
  Client c(kmd);
  const uint32_t blocker = c.ctx(DRM_NPU_PRIORITY_REALTIME);
  const uint32_t a = c.ctx(), b = c.ctx();
  const auto hung = hung_job();
  const BoHandle h = c.upload(hung);
  ASSERT_EQ(c.submit(blocker, h, hung.size(), {ref(h, kR)}, kHangFlags), 0);
  const auto empty = empty_job();
  const BoHandle e = c.upload(empty);
  uint64_t last = 0;
  ASSERT_EQ(c.submit(a, e, empty.size(), {ref(e, kR)}), 0);
  ASSERT_EQ(c.submit(b, e, empty.size(), {ref(e, kR)}), 0);
  ASSERT_EQ(c.submit(b, e, empty.size(), {ref(e, kR)}, 0, &last), 0);
  EXPECT_EQ(c.submit(a, e, empty.size(), {ref(e, kR)}), EDQUOT);
  const std::string why = c.last_error();
  EXPECT_NE(why.find("limit of jobs in flight 4"), std::string::npos) << why;
  EXPECT_EQ(quota(c).jobs_in_flight, 4u);
  EXPECT_EQ(quota(c).jobs_in_flight_limit, 4u);

  Client other(kmd);  // another file is not held to this one's count
  const uint32_t o = other.ctx();
  const BoHandle oe = other.upload(empty);
  uint64_t os = 0;
  ASSERT_EQ(other.submit(o, oe, empty.size(), {ref(oe, kR)}, 0, &os), 0);

  ASSERT_EQ(c.wait(b, last, deadline_ms(10'000)), 0);
  ASSERT_EQ(other.wait(o, os, deadline_ms(10'000)), 0);
  EXPECT_EQ(quota(c).jobs_in_flight, 0u);
  EXPECT_EQ(c.submit(a, e, empty.size(), {ref(e, kR)}), 0);
}

TEST(KmdPolicy, RealtimeNeedsThePrivilege) {
  Kmd kmd;
  Client plain(kmd, Kmd::Opener{.realtime = false});
  Client privileged(kmd, Kmd::Opener{.realtime = true});
  drm_npu_ctx_create cc{};
  cc.priority = DRM_NPU_PRIORITY_REALTIME;
  EXPECT_EQ(plain.io(DRM_IOCTL_NPU_CTX_CREATE, &cc), EPERM);
  const std::string why = plain.last_error();
  EXPECT_NE(why.find("CAP_SYS_NICE"), std::string::npos) << why;
  EXPECT_EQ(quota(plain).flags & DRM_NPU_QUOTA_REALTIME, 0u);
  EXPECT_EQ(quota(plain).contexts, 0u);
  // Raised but not REALTIME priorities need nothing.
  EXPECT_NE(plain.ctx(DRM_NPU_PRIORITY_HIGH), 0u);

  EXPECT_NE(privileged.ctx(DRM_NPU_PRIORITY_REALTIME), 0u);
  EXPECT_EQ(quota(privileged).flags & DRM_NPU_QUOTA_REALTIME, DRM_NPU_QUOTA_REALTIME);
  EXPECT_TRUE(kmd.usage(privileged.fd()).realtime);
  EXPECT_FALSE(kmd.usage(plain.fd()).realtime);
}

TEST(KmdQuota, BadQuotaQueriesAreEinval) {
  Kmd kmd;
  Client c(kmd);
  drm_npu_quota q{};
  EXPECT_EQ(c.query(DRM_NPU_QUERY_QUOTA, &q, 1), EINVAL);
}

}  // namespace
}  // namespace npu::emu::test
