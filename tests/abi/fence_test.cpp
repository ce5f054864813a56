// API 1.3 on a node: out-fences, in-fences (order, a failed dependency, bad descriptors),
// FENCE_WAIT, a 1.2 caller's 48-byte SUBMIT, BO export/import across files and processes
// (the descriptors passed over a UNIX socket), context events, and the cross-job race
// checker. Raw ioctls only; every case skips on a node without the capability.
#include <sys/socket.h>
#include <sys/wait.h>

#include "abi.h"

namespace npu::abi {
namespace {

TEST(AbiFence, OutFenceAndStatus) {
  NPU_ABI_REQUIRE(1, 3, DRM_NPU_CAP_FENCES);
  File f;
  const uint32_t ctx = f.ctx();
  const auto empty = empty_job();
  const Bo e = f.upload(empty);
  const Submitted s = f.submit_fenced(ctx, e, empty.size(), {ref(e, kR)}, DRM_NPU_SUBMIT_FENCE_OUT);
  ASSERT_EQ(s.err, 0);
  ASSERT_GE(s.fence, 0);
  EXPECT_TRUE(fence_readable(s.fence, 5000));
  EXPECT_EQ(fence_status(s.fence), DRM_NPU_JOB_OK);
  const Submitted plain = f.submit_fenced(ctx, e, empty.size(), {ref(e, kR)}, 0);
  ASSERT_EQ(plain.err, 0);
  EXPECT_EQ(plain.fence, -1);
  ::close(s.fence);
}

TEST(AbiFence, DependencyFailureAndBadFences) {
  NPU_ABI_REQUIRE(1, 3, DRM_NPU_CAP_FENCES);
  NPU_ABI_REQUIRE_HANG();
  File f;
  const uint32_t a = f.ctx(), b = f.ctx();
  const auto hung = hung_job(), empty = empty_job();
  const Bo h = f.upload(hung), e = f.upload(empty);
  const Submitted dep = f.submit_fenced(a, h, hung.size(), {ref(h, kR)},
                                        DRM_NPU_SUBMIT_FENCE_OUT | DRM_NPU_SUBMIT_SKIP_VALIDATION);
  ASSERT_EQ(dep.err, 0);
  const Submitted job = f.submit_fenced(b, e, empty.size(), {ref(e, kR)}, 0, {dep.fence});
  ASSERT_EQ(job.err, 0);
  drm_npu_wait w{};
  ASSERT_EQ(f.wait(b, job.seqno, deadline_ms(8 * kMaxWatchdogMs), &w), 0);
  EXPECT_EQ(w.status, uint32_t{DRM_NPU_JOB_ABORTED});
  EXPECT_EQ(w.fault.kind, uint32_t{DRM_NPU_FAULT_DEPENDENCY});
  EXPECT_EQ(f.ctx_state(b).state, uint32_t{DRM_NPU_CTX_STATE_ACTIVE});
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  EXPECT_EQ(f.submit_fenced(b, e, empty.size(), {ref(e, kR)}, 0, {p[0]}).err, EINVAL);
  EXPECT_EQ(f.submit_fenced(b, e, empty.size(), {ref(e, kR)}, 0, {4000}).err, EBADF);
  EXPECT_EQ(f.submit_fenced(b, e, empty.size(), {ref(e, kR)}, 0,
                            std::vector<int32_t>(DRM_NPU_MAX_IN_FENCES + 1, dep.fence))
                .err,
            EINVAL);
  drm_npu_submit s{};
  drm_npu_bo_ref r = ref(e, kR);
  s.ctx_id = b;
  s.cmd_handle = e.handle;
  s.bo_count = 1;
  s.bos = reinterpret_cast<uintptr_t>(&r);
  s.cmd_size = empty.size();
  s.in_fence_count = 1;
  s.in_fences = 0x10;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_SUBMIT, &s), EFAULT);
  ::close(p[0]);
  ::close(p[1]);
  ::close(dep.fence);
}

TEST(AbiFence, FenceWaitArgumentsAndResult) {
  NPU_ABI_REQUIRE(1, 3, DRM_NPU_CAP_FENCES);
  File f;
  const uint32_t ctx = f.ctx();
  const auto empty = empty_job();
  const Bo e = f.upload(empty);
  const Submitted s1 =
      f.submit_fenced(ctx, e, empty.size(), {ref(e, kR)}, DRM_NPU_SUBMIT_FENCE_OUT);
  const Submitted s2 =
      f.submit_fenced(ctx, e, empty.size(), {ref(e, kR)}, DRM_NPU_SUBMIT_FENCE_OUT);
  ASSERT_TRUE(s1.err == 0 && s2.err == 0);
  int32_t fds[2] = {s1.fence, s2.fence};
  drm_npu_fence_wait w{};
  w.fences = reinterpret_cast<uintptr_t>(fds);
  w.count = 2;
  w.flags = DRM_NPU_FENCE_WAIT_ALL;
  w.timeout_ns = deadline_ms(5000);
  ASSERT_EQ(f.io(DRM_IOCTL_NPU_FENCE_WAIT, &w), 0);
  EXPECT_EQ(w.signalled, 2u);
  EXPECT_EQ(w.status, uint32_t{DRM_NPU_JOB_OK});
  drm_npu_fence_wait bad = w;
  bad.count = DRM_NPU_MAX_IN_FENCES + 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_FENCE_WAIT, &bad), EINVAL);
  bad = w;
  bad.pad = 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_FENCE_WAIT, &bad), EINVAL);
  int32_t junk[1] = {1};  // stdout is no fence
  bad = w;
  bad.fences = reinterpret_cast<uintptr_t>(junk);
  bad.count = 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_FENCE_WAIT, &bad), EINVAL);
  ::close(s1.fence);
  ::close(s2.fence);
}

TEST(AbiFence, OldSubmitSizeIsZeroExtended) {
  NPU_ABI_REQUIRE(1, 3, 0);
  File f;
  const uint32_t ctx = f.ctx();
  const auto empty = empty_job();
  const Bo e = f.upload(empty);
  drm_npu_bo_ref r = ref(e, kR);
  std::vector<std::byte> old(DRM_NPU_SUBMIT_SIZE_V1 + 8, std::byte{0x77});
  drm_npu_submit s{};
  s.ctx_id = ctx;
  s.cmd_handle = e.handle;
  s.bo_count = 1;
  s.cmd_size = empty.size();
  s.bos = reinterpret_cast<uintptr_t>(&r);
  std::memcpy(old.data(), &s, DRM_NPU_SUBMIT_SIZE_V1);
  ASSERT_EQ(f.io(_IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, DRM_COMMAND_BASE + DRM_NPU_SUBMIT,
                      DRM_NPU_SUBMIT_SIZE_V1),
                 old.data()),
            0);
  for (size_t i = DRM_NPU_SUBMIT_SIZE_V1; i < old.size(); ++i) {
    ASSERT_EQ(old[i], std::byte{0x77}) << "byte " << i << " written past the caller's struct";
  }
  std::memcpy(&s, old.data(), DRM_NPU_SUBMIT_SIZE_V1);
  EXPECT_EQ(f.wait(ctx, s.seqno, deadline_ms(5000)), 0);
}

// Sends `fds` over the socket `sock` (SCM_RIGHTS), with one byte.
bool send_fds(int sock, std::vector<int> fds) {
  char byte = 'x';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  return ::sendmsg(sock, &m, 0) == 1;
}

std::vector<int> recv_fds(int sock) {
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  m.msg_controllen = sizeof(control);
  std::vector<int> out;
  if (::recvmsg(sock, &m, 0) != 1) return out;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_type != SCM_RIGHTS) continue;
    const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    out.resize(n);
    std::memcpy(out.data(), CMSG_DATA(c), n * sizeof(int));
  }
  return out;
}

// A producer process exports a BO and hands its job's fence and the BO to a consumer
// process over a UNIX socket, without waiting: the consumer imports the BO on a file of its
// own and runs a job on it after the fence; its output is the producer's data.
TEST(AbiShare, TwoProcessesChainJobsThroughAFenceOnASharedBo) {
  NPU_ABI_REQUIRE(1, 3, DRM_NPU_CAP_FENCES | DRM_NPU_CAP_BO_SHARING);
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  const pid_t consumer = ::fork();
  ASSERT_GE(consumer, 0);
  if (consumer == 0) {
    ::close(sv[0]);
    const std::vector<int> got = recv_fds(sv[1]);
    if (got.size() != 2) ::_exit(2);
    File f;
    drm_npu_bo_import im{};
    im.fd = got[0];
    if (f.io(DRM_IOCTL_NPU_BO_IMPORT, &im) != 0) ::_exit(3);
    const Bo shared{im.handle, im.device_addr, im.size, 0};
    const Bo out = f.bo(4096);
    const uint32_t ctx = f.ctx();
    const auto copy = copy_job(shared.va, out.va, 256);
    const Bo cmd = f.upload(copy);
    const Submitted s = f.submit_fenced(ctx, cmd, copy.size(),
                                        {ref(cmd, kR), ref(shared, kR), ref(out, kW)}, 0, {got[1]});
    if (s.err != 0) ::_exit(4);
    drm_npu_wait w{};
    if (f.wait(ctx, s.seqno, deadline_ms(10'000), &w) != 0 || w.status != DRM_NPU_JOB_OK) {
      ::_exit(5);
    }
    const std::byte* o = f.map(out);
    for (int i = 0; i < 256; ++i) {
      if (o[i] != std::byte(i ^ 0x3c)) ::_exit(6);
    }
    ::_exit(0);
  }
  ::close(sv[1]);
  File f;
  const Bo src = f.bo(4096), shared = f.bo(4096);
  std::byte* in = f.map(src);
  ASSERT_NE(in, nullptr);
  for (int i = 0; i < 256; ++i) in[i] = std::byte(i ^ 0x3c);
  const uint32_t ctx = f.ctx();
  const auto copy = copy_job(src.va, shared.va, 256);
  const Bo cmd = f.upload(copy);
  const Submitted s =
      f.submit_fenced(ctx, cmd, copy.size(), {ref(cmd, kR), ref(src, kR), ref(shared, kW)},
                      DRM_NPU_SUBMIT_FENCE_OUT);
  ASSERT_EQ(s.err, 0);
  drm_npu_bo_export ex{};
  ex.handle = shared.handle;
  ex.flags = DRM_NPU_EXPORT_CLOEXEC;
  ASSERT_EQ(f.io(DRM_IOCTL_NPU_BO_EXPORT, &ex), 0);
  ASSERT_TRUE(send_fds(sv[0], {ex.fd, s.fence}));  // no wait for the job first
  int status = 0;
  ASSERT_EQ(::waitpid(consumer, &status, 0), consumer);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "the consumer failed at step " << WEXITSTATUS(status)
      << " (2 no descriptors, 3 import, 4 submit, 5 wait, 6 wrong data)";
  ::close(ex.fd);
  ::close(s.fence);
  ::close(sv[0]);
}

TEST(AbiShare, ExportImportErrors) {
  NPU_ABI_REQUIRE(1, 3, DRM_NPU_CAP_BO_SHARING);
  File f;
  const Bo b = f.bo(4096);
  drm_npu_bo_export ex{};
  ex.handle = 9999;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_BO_EXPORT, &ex), ENOENT);
  ex.handle = b.handle;
  ex.pad = 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_BO_EXPORT, &ex), EINVAL);
  ex.pad = 0;
  ex.flags = 0x80;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_BO_EXPORT, &ex), EINVAL);
  ex.flags = DRM_NPU_EXPORT_CLOEXEC;
  ASSERT_EQ(f.io(DRM_IOCTL_NPU_BO_EXPORT, &ex), 0);
  drm_npu_bo_import im{};
  im.fd = ex.fd;
  ASSERT_EQ(f.io(DRM_IOCTL_NPU_BO_IMPORT, &im), 0);
  EXPECT_EQ(im.handle, b.handle) << "importing one's own export gives the existing handle";
  EXPECT_NE(im.flags & DRM_NPU_BO_IMPORT_EXISTED, 0u);
  im = {};
  im.fd = 1;  // stdout
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_BO_IMPORT, &im), EINVAL);
  im.fd = 4000;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_BO_IMPORT, &im), EBADF);
  ::close(ex.fd);
}

TEST(AbiCtxEvents, FaultMakesItReadable) {
  NPU_ABI_REQUIRE(1, 3, DRM_NPU_CAP_CTX_EVENTS);
  NPU_ABI_REQUIRE_HANG();
  File f;
  const uint32_t ctx = f.ctx();
  drm_npu_ctx_events ev{};
  ev.ctx_id = ctx;
  ASSERT_EQ(f.io(DRM_IOCTL_NPU_CTX_EVENTS, &ev), 0);
  EXPECT_FALSE(fence_readable(ev.fd));
  const auto hung = hung_job();
  const Bo h = f.upload(hung);
  uint64_t seqno = 0;
  ASSERT_EQ(f.submit(ctx, h, hung.size(), {ref(h, kR)}, DRM_NPU_SUBMIT_SKIP_VALIDATION, &seqno), 0);
  EXPECT_TRUE(fence_readable(ev.fd, 8 * kMaxWatchdogMs));
  drm_npu_ctx_events bad{};
  bad.ctx_id = 9999;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_CTX_EVENTS, &bad), ENOENT);
  ::close(ev.fd);
}

}  // namespace
}  // namespace npu::abi
