// API 1.3 fences in the mock driver: out-fences (readable when the job retires, the status
// byte, outliving the file), in-fences (ordering, a failed dependency aborting the job, bad
// descriptors), FENCE_WAIT, a 1.2 caller's smaller SUBMIT, and context events.
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kmd_fixture.h"

namespace npu::emu::test {
namespace {

// SUBMIT with fences; returns errno, fills seqno and the out-fence.
int submit_fenced(Client& c, uint32_t ctx, const BoHandle& cmd, uint64_t size,
                  std::vector<drm_npu_bo_ref> refs, uint32_t flags, std::vector<int32_t> in,
                  uint64_t* seqno, int* fence) {
  const Submitted s = c.submit_fenced(ctx, cmd, size, std::move(refs), flags, std::move(in));
  if (seqno != nullptr) *seqno = s.seqno;
  if (fence != nullptr) *fence = s.fence;
  return s.err;
}

TEST(KmdFence, OutFenceSignalsWithTheStatusAndOutlivesTheFile) {
  Kmd kmd;
  int fence = -1;
  {
    Client c(kmd);
    const uint32_t ctx = c.ctx();
    const auto bytes = empty_job();
    const BoHandle cmd = c.upload(bytes);
    uint64_t seqno = 0;
    ASSERT_EQ(submit_fenced(c, ctx, cmd, bytes.size(), {ref(cmd, kR)}, DRM_NPU_SUBMIT_FENCE_OUT, {},
                            &seqno, &fence),
              0);
    ASSERT_GE(fence, 0);
    EXPECT_EQ(::fcntl(fence, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(5000)), 0);
    EXPECT_TRUE(fence_readable(fence, 1000));
    EXPECT_EQ(fence_status(fence), DRM_NPU_JOB_OK);
    // Without FENCE_OUT the field is -1.
    int none = 0;
    ASSERT_EQ(submit_fenced(c, ctx, cmd, bytes.size(), {ref(cmd, kR)}, 0, {}, nullptr, &none), 0);
    EXPECT_EQ(none, -1);
  }  // the file is closed
  EXPECT_TRUE(fence_readable(fence));
  EXPECT_EQ(fence_status(fence), DRM_NPU_JOB_OK);
  const int copy = ::dup(fence);
  ::close(fence);
  EXPECT_EQ(fence_status(copy), DRM_NPU_JOB_OK) << "a dup() is the same fence";
  ::close(copy);
}

TEST(KmdFence, FaultedJobSignalsError) {
  Kmd kmd;
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  isa::CommandBufferBuilder b;
  b.dma_load({.dram = 0xff00000000ull, .sram = 0, .elem_size = 1, .size = {16, 1, 1}});
  const auto bytes = b.finish();
  const BoHandle cmd = c.upload(bytes);
  int fence = -1;
  ASSERT_EQ(
      submit_fenced(c, ctx, cmd, bytes.size(), {ref(cmd, kR)},
                    DRM_NPU_SUBMIT_FENCE_OUT | DRM_NPU_SUBMIT_SKIP_VALIDATION, {}, nullptr, &fence),
      0);
  ASSERT_TRUE(fence_readable(fence, 5000));
  EXPECT_EQ(fence_status(fence), DRM_NPU_JOB_ERROR);
  ::close(fence);
}

// B waits for A across contexts and files: it starts after A ends; A hung until the
// watchdog makes B abort with fault DEPENDENCY (its context is not banned).
TEST(KmdFence, InFenceOrdersAndAFailedDependencyAborts) {
  Kmd kmd(config_with_watchdog(150));
  Client a(kmd), b(kmd);
  const uint32_t actx = a.ctx(), bctx = b.ctx(DRM_NPU_PRIORITY_HIGH);
  const auto empty = empty_job();
  const BoHandle ae = a.upload(empty), be = b.upload(empty);
  // Ordering: A (a copy behind nothing) then B on another file.
  const BoHandle src = a.bo(4096), dst = a.bo(4096);
  const auto copy = copy_job(src.va, dst.va, 256);
  const BoHandle ac = a.upload(copy);
  int afence = -1;
  uint64_t aseq = 0;
  ASSERT_EQ(submit_fenced(a, actx, ac, copy.size(), {ref(ac, kR), ref(src, kR), ref(dst, kW)},
                          DRM_NPU_SUBMIT_FENCE_OUT, {}, &aseq, &afence),
            0);
  uint64_t bseq = 0;
  ASSERT_EQ(submit_fenced(b, bctx, be, empty.size(), {ref(be, kR)}, 0, {afence}, &bseq, nullptr),
            0);
  drm_npu_wait wa{}, wb{};
  ASSERT_EQ(a.wait(actx, aseq, deadline_ms(5000), &wa), 0);
  ASSERT_EQ(b.wait(bctx, bseq, deadline_ms(5000), &wb), 0);
  EXPECT_EQ(wb.status, uint32_t{DRM_NPU_JOB_OK});
  EXPECT_GE(wb.start_ns, wa.end_ns) << "B started before the job it waits for ended";
  ::close(afence);
  // A failed dependency: a hung job's fence; B is aborted once the watchdog ends it.
  const auto hung = hung_job();
  const BoHandle ah = a.upload(hung);
  int hfence = -1;
  ASSERT_EQ(submit_fenced(a, actx, ah, hung.size(), {ref(ah, kR)},
                          DRM_NPU_SUBMIT_FENCE_OUT | DRM_NPU_SUBMIT_SKIP_VALIDATION, {}, nullptr,
                          &hfence),
            0);
  int bfence = -1;
  ASSERT_EQ(submit_fenced(b, bctx, be, empty.size(), {ref(be, kR)}, DRM_NPU_SUBMIT_FENCE_OUT,
                          {hfence}, &bseq, &bfence),
            0);
  EXPECT_EQ(b.wait(bctx, bseq, 0), EBUSY) << "B ran before its dependency ended";
  ASSERT_EQ(b.wait(bctx, bseq, deadline_ms(10'000), &wb), 0);
  EXPECT_EQ(wb.status, uint32_t{DRM_NPU_JOB_ABORTED});
  EXPECT_EQ(wb.fault.kind, uint32_t{DRM_NPU_FAULT_DEPENDENCY});
  EXPECT_EQ(wb.fault.address, 0u) << "the index of the failed in-fence";
  EXPECT_EQ(fence_status(bfence), DRM_NPU_JOB_ABORTED) << "B's own fence carries its status";
  EXPECT_EQ(b.ctx_state(bctx).state, uint32_t{DRM_NPU_CTX_STATE_ACTIVE})
      << "a dependency failure does not ban";
  EXPECT_EQ(a.ctx_state(actx).state, uint32_t{DRM_NPU_CTX_STATE_BANNED});
  ::close(hfence);
  ::close(bfence);
}

TEST(KmdFence, BadInFencesAreRefused) {
  Kmd kmd;
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  const auto empty = empty_job();
  const BoHandle e = c.upload(empty);
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  auto with = [&](std::vector<int32_t> in) {
    return submit_fenced(c, ctx, e, empty.size(), {ref(e, kR)}, 0, std::move(in), nullptr, nullptr);
  };
  EXPECT_EQ(with({p[0]}), EINVAL) << "a pipe is no fence";
  EXPECT_EQ(with({9999}), EBADF) << "not open";
  EXPECT_EQ(with({-1}), EBADF);
  EXPECT_EQ(with(std::vector<int32_t>(DRM_NPU_MAX_IN_FENCES + 1, p[0])), EINVAL) << "too many";
  drm_npu_submit s{};
  s.ctx_id = ctx;
  s.cmd_handle = e.handle;
  drm_npu_bo_ref r = ref(e, kR);
  s.bo_count = 1;
  s.bos = reinterpret_cast<uintptr_t>(&r);
  s.cmd_size = empty.size();
  s.in_fence_count = 1;
  s.in_fences = 0;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_SUBMIT, &s), EFAULT);
  // Another device's fence is not this one's.
  Kmd other;
  Client o(other);
  const uint32_t octx = o.ctx();
  const BoHandle oe = o.upload(empty);
  int ofence = -1;
  ASSERT_EQ(submit_fenced(o, octx, oe, empty.size(), {ref(oe, kR)}, DRM_NPU_SUBMIT_FENCE_OUT, {},
                          nullptr, &ofence),
            0);
  EXPECT_EQ(with({ofence}), EINVAL);
  ::close(ofence);
  ::close(p[0]);
  ::close(p[1]);
}

TEST(KmdFence, FenceWaitAnyAndAll) {
  Kmd kmd(config_with_watchdog(150));
  Client c(kmd);
  const uint32_t ok_ctx = c.ctx(), hung_ctx = c.ctx();
  const auto empty = empty_job(), hung = hung_job();
  const BoHandle e = c.upload(empty), h = c.upload(hung);
  int fh = -1, fe = -1;
  ASSERT_EQ(
      submit_fenced(c, hung_ctx, h, hung.size(), {ref(h, kR)},
                    DRM_NPU_SUBMIT_FENCE_OUT | DRM_NPU_SUBMIT_SKIP_VALIDATION, {}, nullptr, &fh),
      0);
  ASSERT_EQ(submit_fenced(c, ok_ctx, e, empty.size(), {ref(e, kR)}, DRM_NPU_SUBMIT_FENCE_OUT, {},
                          nullptr, &fe),
            0);
  int32_t fds[2] = {fh, fe};
  drm_npu_fence_wait w{};
  w.fences = reinterpret_cast<uintptr_t>(fds);
  w.count = 2;
  w.flags = DRM_NPU_FENCE_WAIT_ALL;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_FENCE_WAIT, &w), EBUSY) << "the hung job has not retired";
  w.timeout_ns = deadline_ms(10);
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_FENCE_WAIT, &w), ETIMEDOUT);
  // ANY: the empty job (behind the hung one) ends once the watchdog resets the device.
  w.flags = 0;
  w.timeout_ns = deadline_ms(10'000);
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_FENCE_WAIT, &w), 0);
  EXPECT_GE(w.signalled, 1u);
  w.flags = DRM_NPU_FENCE_WAIT_ALL;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_FENCE_WAIT, &w), 0);
  EXPECT_EQ(w.signalled, 2u);
  EXPECT_EQ(w.first, 0u);
  EXPECT_EQ(w.status, uint32_t{DRM_NPU_JOB_ERROR}) << "fence 0 is the hung job's";
  EXPECT_EQ(fence_status(fe), DRM_NPU_JOB_OK);
  // Argument checks.
  drm_npu_fence_wait bad = w;
  bad.count = 0;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_FENCE_WAIT, &bad), EINVAL);
  bad = w;
  bad.flags = 2;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_FENCE_WAIT, &bad), EINVAL);
  bad = w;
  bad.timeout_ns = -1;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_FENCE_WAIT, &bad), EINVAL);
  bad = w;
  bad.fences = 0;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_FENCE_WAIT, &bad), EFAULT);
  ::close(fh);
  ::close(fe);
}

// A caller built against the 1.2 header: a 48-byte SUBMIT, zero-extended; only its 48 bytes
// come back.
TEST(KmdFence, OldSubmitSizeStillWorks) {
  Kmd kmd;
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  const auto empty = empty_job();
  const BoHandle e = c.upload(empty);
  drm_npu_bo_ref r = ref(e, kR);
  std::vector<std::byte> old(DRM_NPU_SUBMIT_SIZE_V1 + 16, std::byte{0x5a});
  drm_npu_submit s{};
  s.ctx_id = ctx;
  s.cmd_handle = e.handle;
  s.bo_count = 1;
  s.cmd_size = empty.size();
  s.bos = reinterpret_cast<uintptr_t>(&r);
  std::memcpy(old.data(), &s, DRM_NPU_SUBMIT_SIZE_V1);
  const unsigned long v1 = _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE,
                                DRM_COMMAND_BASE + DRM_NPU_SUBMIT, DRM_NPU_SUBMIT_SIZE_V1);
  ASSERT_EQ(c.io(v1, old.data()), 0);
  drm_npu_submit back{};
  std::memcpy(&back, old.data(), DRM_NPU_SUBMIT_SIZE_V1);
  EXPECT_EQ(back.seqno, 1u);
  for (size_t i = DRM_NPU_SUBMIT_SIZE_V1; i < old.size(); ++i) {
    ASSERT_EQ(old[i], std::byte{0x5a}) << "byte " << i << " past the caller's struct was written";
  }
  EXPECT_EQ(c.wait(ctx, 1, deadline_ms(5000)), 0);
  // Smaller than the first size, or larger than the current one: refused.
  const unsigned long tiny =
      _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, DRM_COMMAND_BASE + DRM_NPU_SUBMIT, 40);
  EXPECT_EQ(c.io(tiny, old.data()), EINVAL);
}

TEST(KmdCtxEvents, FaultAndResetMakeTheDescriptorReadable) {
  Kmd kmd(config_with_watchdog(150));
  Client c(kmd);
  const uint32_t guilty = c.ctx(), bystander = c.ctx();
  drm_npu_ctx_events ev{};
  ev.ctx_id = guilty;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_CTX_EVENTS, &ev), 0);
  const int guilty_fd = ev.fd;
  ev = {};
  ev.ctx_id = bystander;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_CTX_EVENTS, &ev), 0);
  const int bystander_fd = ev.fd;
  EXPECT_FALSE(fence_readable(guilty_fd));
  const auto hung = hung_job();
  const BoHandle h = c.upload(hung);
  uint64_t seqno = 0;
  ASSERT_EQ(c.submit(guilty, h, hung.size(), {ref(h, kR)}, kHangFlags, &seqno), 0);
  ASSERT_EQ(c.wait(guilty, seqno, deadline_ms(10'000)), 0);
  EXPECT_TRUE(fence_readable(guilty_fd, 1000)) << "the fault (a watchdog reset) bans the context";
  EXPECT_TRUE(fence_readable(bystander_fd, 1000)) << "the device reset";
  uint64_t n = 0;
  ASSERT_EQ(::read(guilty_fd, &n, sizeof(n)), static_cast<ssize_t>(sizeof(n)));
  EXPECT_EQ(n, 1u);
  EXPECT_FALSE(fence_readable(guilty_fd)) << "read() resets the count";
  ev = {};
  ev.ctx_id = 999;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_CTX_EVENTS, &ev), ENOENT);
  ev.ctx_id = guilty;
  ev.flags = 1;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_CTX_EVENTS, &ev), EINVAL);
  ::close(guilty_fd);
  ::close(bystander_fd);
}

}  // namespace
}  // namespace npu::emu::test
