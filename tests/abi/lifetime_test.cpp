// Lifetimes: BOs versus handles, mappings and jobs; a file closed with jobs in flight; the
// open file description shared by dup() and by a forked child.
#include <sys/wait.h>

#include "abi.h"

namespace npu::abi {
namespace {

// The handle closed while a job uses the BO: the job completes, its output lands in the
// memory the mapping still shows.
TEST(AbiLifetime, BoClosedUnderAQueuedJob) {
  NPU_ABI_REQUIRE_HANG();
  File f;
  const uint32_t blocker = f.ctx();
  const uint32_t ctx = f.ctx();
  const auto hung = hung_job();
  const Bo h = f.upload(hung);
  ASSERT_EQ(f.submit(blocker, h, hung.size(), {ref(h, kR)}, DRM_NPU_SUBMIT_SKIP_VALIDATION), 0);
  const Bo src = f.bo(4096);
  const Bo dst = f.bo(4096);
  std::byte* in = f.map(src);
  std::byte* out = f.map(dst);
  ASSERT_TRUE(in != nullptr && out != nullptr);
  for (int i = 0; i < 64; ++i) in[i] = std::byte(200 - i);
  const auto bytes = copy_job(src.va, dst.va, 64);
  const Bo cmd = f.upload(bytes);
  uint64_t seqno = 0;
  ASSERT_EQ(f.submit(ctx, cmd, bytes.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &seqno),
            0);
  for (const Bo& b : {src, dst, cmd}) ASSERT_EQ(f.bo_close(b.handle), 0);
  drm_npu_wait w{};
  ASSERT_EQ(f.wait(ctx, seqno, deadline_ms(8 * kMaxWatchdogMs), &w), 0);
  EXPECT_EQ(w.status, uint32_t{DRM_NPU_JOB_OK});
  EXPECT_EQ(std::memcmp(in, out, 64), 0);
}

// Closing a file with a running (hung) job and queued ones returns once the running job is
// ended (the watchdog) and the queued ones aborted; the device serves the next file.
TEST(AbiLifetime, CloseWithJobsInFlight) {
  NPU_ABI_REQUIRE_HANG();
  {
    File doomed;
    const uint32_t ctx = doomed.ctx();
    const auto hung = hung_job();
    const Bo h = doomed.upload(hung);
    ASSERT_EQ(doomed.submit(ctx, h, hung.size(), {ref(h, kR)}, DRM_NPU_SUBMIT_SKIP_VALIDATION), 0);
    const auto empty = empty_job();
    const Bo e = doomed.upload(empty);
    for (int i = 0; i < 8; ++i) ASSERT_EQ(doomed.submit(ctx, e, empty.size(), {ref(e, kR)}), 0);
  }  // closed here
  File f;
  const uint32_t ctx = f.ctx();
  const auto empty = empty_job();
  const Bo e = f.upload(empty);
  uint64_t seqno = 0;
  ASSERT_EQ(f.submit(ctx, e, empty.size(), {ref(e, kR)}, 0, &seqno), 0);
  drm_npu_wait w{};
  ASSERT_EQ(f.wait(ctx, seqno, deadline_ms(8 * kMaxWatchdogMs), &w), 0);
  EXPECT_EQ(w.status, uint32_t{DRM_NPU_JOB_OK});
}

// dup() shares the open file: handles and contexts, and it outlives the original descriptor.
TEST(AbiLifetime, DupSharesTheFile) {
  auto f = std::make_unique<File>();
  const Bo b = f->bo(4096);
  const uint32_t ctx = f->ctx();
  const int copy = ::dup(f->fd());
  ASSERT_GE(copy, 0);
  f.reset();  // closes the original descriptor
  drm_npu_bo_info i{};
  i.handle = b.handle;
  EXPECT_EQ(::ioctl(copy, DRM_IOCTL_NPU_BO_INFO, &i), 0) << std::strerror(errno);
  EXPECT_EQ(i.device_addr, b.va);
  drm_npu_ctx_destroy d{};
  d.ctx_id = ctx;
  EXPECT_EQ(::ioctl(copy, DRM_IOCTL_NPU_CTX_DESTROY, &d), 0) << std::strerror(errno);
  EXPECT_EQ(::close(copy), 0);
  EXPECT_EQ(::ioctl(copy, DRM_IOCTL_NPU_BO_INFO, &i), -1);
  EXPECT_EQ(errno, EBADF);
}

// A forked child's inherited descriptor is the same open file: it sees the parent's handles
// and runs a job on the parent's BOs, which the parent then reads.
TEST(AbiLifetime, ForkedChildSharesTheFile) {
  File f;
  const uint32_t ctx = f.ctx();
  const Bo src = f.bo(4096);
  const Bo dst = f.bo(4096);
  std::byte* in = f.map(src);
  std::byte* out = f.map(dst);
  ASSERT_TRUE(in != nullptr && out != nullptr);
  for (int i = 0; i < 128; ++i) in[i] = std::byte(i ^ 0x5a);
  const auto bytes = copy_job(src.va, dst.va, 128);
  const Bo cmd = f.upload(bytes);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    drm_npu_submit s{};
    drm_npu_bo_ref refs[3] = {ref(cmd, kR), ref(src, kR), ref(dst, kW)};
    s.ctx_id = ctx;
    s.cmd_handle = cmd.handle;
    s.bo_count = 3;
    s.cmd_size = bytes.size();
    s.bos = reinterpret_cast<uintptr_t>(refs);
    if (::ioctl(f.fd(), DRM_IOCTL_NPU_SUBMIT, &s) != 0) ::_exit(10 + errno % 100);
    drm_npu_wait w{};
    w.ctx_id = ctx;
    w.seqno = s.seqno;
    w.timeout_ns = deadline_ms(10'000);
    if (::ioctl(f.fd(), DRM_IOCTL_NPU_WAIT, &w) != 0 || w.status != DRM_NPU_JOB_OK) ::_exit(3);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child's ioctl failed (10 + errno " << ENODEV
                                    << " is ENODEV: the device did not come along)";
  EXPECT_EQ(std::memcmp(in, out, 128), 0);
  EXPECT_EQ(f.ctx_state(ctx).last_completed, 1u) << "the child's job is in the parent's context";
}

}  // namespace
}  // namespace npu::abi
