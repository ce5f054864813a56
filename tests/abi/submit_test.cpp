// CTX_CREATE/CTX_DESTROY, SUBMIT and WAIT: the arguments, the jobs' results, faults, banned
// contexts, the queue-full rule and priorities.
#include <numeric>

#include "abi.h"

namespace npu::abi {
namespace {

TEST(AbiCtx, CreateAndDestroy) {
  File f;
  for (uint32_t p = DRM_NPU_PRIORITY_LOW; p <= DRM_NPU_PRIORITY_NORMAL; ++p) {
    const uint32_t id = f.ctx(p);
    EXPECT_NE(id, 0u);
    const drm_npu_context_state s = f.ctx_state(id);
    EXPECT_EQ(s.state, uint32_t{DRM_NPU_CTX_STATE_ACTIVE});
    EXPECT_EQ(s.priority, p);
    EXPECT_EQ(s.last_submitted, 0u);
  }
  drm_npu_ctx_create c{};
  c.priority = DRM_NPU_PRIORITY_REALTIME + 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_CTX_CREATE, &c), EINVAL);
  c.priority = DRM_NPU_PRIORITY_NORMAL;
  c.flags = 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_CTX_CREATE, &c), EINVAL);
  c.flags = 0;
  c.pad = 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_CTX_CREATE, &c), EINVAL);
  const uint32_t id = f.ctx();
  drm_npu_ctx_destroy d{};
  d.ctx_id = id;
  d.pad = 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_CTX_DESTROY, &d), EINVAL);
  d.pad = 0;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_CTX_DESTROY, &d), 0);
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_CTX_DESTROY, &d), ENOENT) << "destroyed twice";
  d.ctx_id = 0;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_CTX_DESTROY, &d), ENOENT);
  File other;
  d.ctx_id = f.ctx();
  EXPECT_EQ(other.io(DRM_IOCTL_NPU_CTX_DESTROY, &d), ENOENT) << "another file's context";
}

class AbiSubmit : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx = f.ctx();
    src = f.bo(4096);
    dst = f.bo(4096);
    std::byte* s = f.map(src);
    ASSERT_NE(s, nullptr);
    for (int i = 0; i < 256; ++i) s[i] = std::byte(i * 3 + 1);
    bytes = copy_job(src.va, dst.va, 256);
    cmd = f.upload(bytes);
  }
  std::vector<drm_npu_bo_ref> refs() const { return {ref(cmd, kR), ref(src, kR), ref(dst, kW)}; }

  File f;
  uint32_t ctx = 0;
  Bo src, dst, cmd;
  std::vector<std::byte> bytes;
};

TEST_F(AbiSubmit, JobRunsAndSeqnosCount) {
  std::byte* out = f.map(dst);
  ASSERT_NE(out, nullptr);
  for (uint64_t want = 1; want <= 3; ++want) {
    uint64_t seqno = 0;
    ASSERT_EQ(f.submit(ctx, cmd, bytes.size(), refs(), 0, &seqno), 0) << f.last_error();
    EXPECT_EQ(seqno, want);
    drm_npu_wait w{};
    ASSERT_EQ(f.wait(ctx, seqno, deadline_ms(10'000), &w), 0);
    EXPECT_EQ(w.status, uint32_t{DRM_NPU_JOB_OK});
    EXPECT_GT(w.cycles, 0u);
    EXPECT_LE(w.submit_ns, w.start_ns);
    EXPECT_LE(w.start_ns, w.end_ns);
  }
  const std::byte* in = f.map(src);
  EXPECT_EQ(std::memcmp(in, out, 256), 0);
  EXPECT_EQ(f.ctx_state(ctx).last_completed, 3u);
}

TEST_F(AbiSubmit, ArgumentErrors) {
  drm_npu_submit s{};
  s.ctx_id = ctx;
  s.cmd_handle = cmd.handle;
  s.cmd_size = bytes.size();
  std::vector<drm_npu_bo_ref> r = refs();
  s.bo_count = static_cast<uint32_t>(r.size());
  s.bos = reinterpret_cast<uintptr_t>(r.data());
  auto with = [&](auto change) {
    drm_npu_submit t = s;
    change(t);
    return f.io(DRM_IOCTL_NPU_SUBMIT, &t);
  };
  EXPECT_EQ(with([](auto& t) { t.flags = 1u << 30; }), EINVAL) << "unknown flag";
  EXPECT_EQ(with([](auto& t) { t.bo_count = 0; }), EINVAL);
  EXPECT_EQ(with([](auto& t) { t.bo_count = DRM_NPU_MAX_BO_REFS + 1; }), EINVAL);
  EXPECT_EQ(with([](auto& t) { t.bos = 0; }), EFAULT);
  EXPECT_EQ(with([](auto& t) { t.bos = 0x10; }), EFAULT);
  EXPECT_EQ(with([](auto& t) { t.ctx_id = 0; }), ENOENT);
  EXPECT_EQ(with([](auto& t) { t.ctx_id = 4242; }), ENOENT);
  EXPECT_EQ(with([](auto& t) { t.cmd_offset = 4; }), EINVAL) << "offset not a multiple of 8";
  EXPECT_EQ(with([](auto& t) { t.cmd_size = 0; }), EINVAL);
  EXPECT_EQ(with([&](auto& t) { t.cmd_size = cmd.size + 8; }), EOVERFLOW);
  EXPECT_EQ(with([&](auto& t) { t.cmd_offset = cmd.size; }), EOVERFLOW);
  EXPECT_EQ(with([&](auto& t) { t.cmd_handle = src.handle; }), EINVAL)
      << "the command BO's bytes are not a command buffer";
  // The BO list: unknown or foreign handles, no access bits, duplicates, the command BO
  // missing or without READ.
  auto with_refs = [&](std::vector<drm_npu_bo_ref> list) {
    drm_npu_submit t = s;
    t.bo_count = static_cast<uint32_t>(list.size());
    t.bos = reinterpret_cast<uintptr_t>(list.data());
    return f.io(DRM_IOCTL_NPU_SUBMIT, &t);
  };
  EXPECT_EQ(with_refs({ref(cmd, kR), {9999, kR}, ref(dst, kW)}), ENOENT);
  EXPECT_EQ(with_refs({ref(cmd, kR), ref(src, 0), ref(dst, kW)}), EINVAL);
  EXPECT_EQ(with_refs({ref(cmd, kR), ref(src, 4), ref(dst, kW)}), EINVAL);
  EXPECT_EQ(with_refs({ref(cmd, kR), ref(src, kR), ref(src, kR), ref(dst, kW)}), EINVAL);
  EXPECT_EQ(with_refs({ref(src, kR), ref(dst, kW)}), EINVAL) << "command BO not listed";
  EXPECT_EQ(with_refs({ref(cmd, kW), ref(src, kR), ref(dst, kW)}), EINVAL);
  // A handle only another file has: handles count from 1 per file, so the fourth BO of
  // another file is a number this file (three BOs) never gave out.
  File other;
  Bo foreign;
  for (int i = 0; i < 4; ++i) foreign = other.bo(4096);
  EXPECT_EQ(with_refs({ref(cmd, kR), ref(src, kR), ref(dst, kW), ref(foreign, kR)}), ENOENT);
}

TEST_F(AbiSubmit, CommandsMayTouchOnlyWhatTheListAllows) {
  // dst listed READ only: the store into it is refused at SUBMIT.
  EXPECT_EQ(f.submit(ctx, cmd, bytes.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kR)}), EFAULT);
  // dst not listed at all.
  EXPECT_EQ(f.submit(ctx, cmd, bytes.size(), {ref(cmd, kR), ref(src, kR)}), EFAULT);
  // A device-read-only BO cannot be listed for writing.
  const Bo ro = f.bo(4096, DRM_NPU_BO_DEVICE_READ_ONLY);
  EXPECT_EQ(
      f.submit(ctx, cmd, bytes.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW), ref(ro, kW)}),
      EINVAL);
}

TEST_F(AbiSubmit, MalformedCommandBufferIsEinvalWithAReason) {
  std::vector<std::byte> bad = bytes;
  bad[0] = std::byte{0};  // the magic
  const Bo b = f.upload(bad);
  EXPECT_EQ(f.submit(ctx, b, bad.size(), {ref(b, kR), ref(src, kR), ref(dst, kW)}), EINVAL);
  EXPECT_FALSE(f.last_error().empty()) << "QUERY LAST_ERROR gives the validator's reason";
}

TEST_F(AbiSubmit, WaitArgumentErrors) {
  uint64_t seqno = 0;
  ASSERT_EQ(f.submit(ctx, cmd, bytes.size(), refs(), 0, &seqno), 0);
  drm_npu_wait w{};
  w.ctx_id = ctx;
  w.seqno = seqno;
  w.timeout_ns = deadline_ms(10'000);
  auto with = [&](auto change) {
    drm_npu_wait t = w;
    change(t);
    return f.io(DRM_IOCTL_NPU_WAIT, &t);
  };
  EXPECT_EQ(with([](auto& t) { t.flags = 1; }), EINVAL);
  EXPECT_EQ(with([](auto& t) { t.pad = 1; }), EINVAL);
  EXPECT_EQ(with([](auto& t) { t.timeout_ns = -1; }), EINVAL);
  EXPECT_EQ(with([](auto& t) { t.ctx_id = 4242; }), ENOENT);
  EXPECT_EQ(with([](auto& t) { t.seqno = 0; }), ENOENT);
  EXPECT_EQ(with([&](auto& t) { t.seqno = seqno + 1; }), ENOENT) << "never handed out";
  EXPECT_EQ(with([](auto&) {}), 0);
}

TEST_F(AbiSubmit, PollAndDeadlineOfAPendingJob) {
  NPU_ABI_REQUIRE_HANG();
  const auto hung = hung_job();
  const Bo h = f.upload(hung);
  uint64_t seqno = 0;
  ASSERT_EQ(f.submit(ctx, h, hung.size(), {ref(h, kR)}, DRM_NPU_SUBMIT_SKIP_VALIDATION, &seqno), 0);
  drm_npu_wait w{};
  EXPECT_EQ(f.wait(ctx, seqno, 0, &w), EBUSY);
  EXPECT_EQ(w.status, uint32_t{DRM_NPU_JOB_TIMEOUT});
  const int64_t deadline = deadline_ms(20);
  EXPECT_EQ(f.wait(ctx, seqno, deadline, &w), ETIMEDOUT);
  EXPECT_EQ(w.status, uint32_t{DRM_NPU_JOB_TIMEOUT});
  EXPECT_GE(now_ns(), deadline) << "returned before its deadline";
  ASSERT_EQ(f.wait(ctx, seqno, deadline_ms(4 * kMaxWatchdogMs), &w), 0);
  EXPECT_EQ(w.status, uint32_t{DRM_NPU_JOB_ERROR});
  EXPECT_EQ(w.fault.kind, uint32_t{DRM_NPU_FAULT_WATCHDOG});
}

// A faulting job bans its context: queued jobs abort, SUBMIT is ECANCELED, other contexts go
// on.
TEST_F(AbiSubmit, FaultBansTheContextAlone) {
  NPU_ABI_REQUIRE(1, 0, DRM_NPU_CAP_SKIP_VALIDATION);
  // Unvalidated, a load from an address no BO covers faults in the MMU.
  isa::CommandBufferBuilder b;
  b.dma_load({.dram = f.param(DRM_NPU_PARAM_VA_END) - 4096,
              .sram = 0,
              .elem_size = 1,
              .size = {16, 1, 1}});
  const auto faulty = b.finish();
  const Bo fb = f.upload(faulty);
  uint64_t seqno = 0;
  ASSERT_EQ(f.submit(ctx, fb, faulty.size(), {ref(fb, kR)}, DRM_NPU_SUBMIT_SKIP_VALIDATION, &seqno),
            0);
  drm_npu_wait w{};
  ASSERT_EQ(f.wait(ctx, seqno, deadline_ms(10'000), &w), 0);
  EXPECT_EQ(w.status, uint32_t{DRM_NPU_JOB_ERROR});
  EXPECT_EQ(w.fault.kind, uint32_t{DRM_NPU_FAULT_MMU});
  EXPECT_EQ(w.fault.cmd_index, 0u);
  const drm_npu_context_state s = f.ctx_state(ctx);
  EXPECT_EQ(s.state, uint32_t{DRM_NPU_CTX_STATE_BANNED});
  EXPECT_EQ(s.fault_seqno, seqno);
  EXPECT_EQ(f.submit(ctx, cmd, bytes.size(), refs()), ECANCELED);
  const uint32_t fresh = f.ctx();
  uint64_t ok_seqno = 0;
  ASSERT_EQ(f.submit(fresh, cmd, bytes.size(), refs(), 0, &ok_seqno), 0);
  ASSERT_EQ(f.wait(fresh, ok_seqno, deadline_ms(10'000), &w), 0);
  EXPECT_EQ(w.status, uint32_t{DRM_NPU_JOB_OK});
}

// The retention window bounds the jobs in flight: behind a hung job, the SUBMIT that would
// evict an unretired job is ENOMEM. The queue must fill before the watchdog lets the device
// move on, and a slow host (a sanitizer, a loaded machine, the daemon's socket) queues the
// window's jobs in more than one watchdog period: so several REALTIME contexts each hold one
// hung job, which the watchdog ends one after the other, and the failure message says whether
// they had all ended first.
TEST_F(AbiSubmit, QueueFullIsEnomem) {
  NPU_ABI_REQUIRE_HANG();
  constexpr int kBlockers = 8;
  const auto hung = hung_job();
  const Bo h = f.upload(hung);
  std::vector<uint32_t> blockers;
  for (int i = 0; i < kBlockers; ++i) {
    blockers.push_back(f.ctx(DRM_NPU_PRIORITY_REALTIME));  // picked first, whenever
    ASSERT_EQ(
        f.submit(blockers.back(), h, hung.size(), {ref(h, kR)}, DRM_NPU_SUBMIT_SKIP_VALIDATION), 0);
  }
  const auto empty = empty_job();
  const Bo e = f.upload(empty);
  int err = 0;
  uint64_t accepted = 0;
  for (int i = 0; i < 4096 && err == 0; ++i) {
    err = f.submit(ctx, e, empty.size(), {ref(e, kR)});
    if (err == 0) ++accepted;
  }
  int holding = 0;
  for (const uint32_t b : blockers) holding += f.wait(b, 1, 0) == EBUSY ? 1 : 0;
  EXPECT_EQ(err, ENOMEM) << "after " << accepted << " queued jobs; " << holding << " of "
                         << kBlockers << " hung jobs still held the device ("
                         << (holding == 0 ? "the watchdog ended them all before the queue filled"
                                          : "the queue should have been full")
                         << ")";
  EXPECT_GT(accepted, 0u);
  // Destroying the blockers aborts their hung jobs that have not started (the running one
  // ends by the watchdog), the last picked first so that none starts meanwhile; then the
  // queue drains and SUBMIT works again.
  for (auto b = blockers.rbegin(); b != blockers.rend(); ++b) EXPECT_EQ(f.destroy_ctx(*b), 0);
  drm_npu_wait w{};
  ASSERT_EQ(f.wait(ctx, accepted, deadline_ms(8 * kMaxWatchdogMs), &w), 0);
  EXPECT_EQ(f.submit(ctx, e, empty.size(), {ref(e, kR)}), 0);
}

// Strict priority: jobs queued behind a running one start in priority order, whatever order
// they were submitted in.
TEST_F(AbiSubmit, HigherPriorityStartsFirst) {
  NPU_ABI_REQUIRE_HANG();
  NPU_ABI_REQUIRE(1, 0, DRM_NPU_CAP_PRIORITY);
  // The hung job holds the device from a REALTIME context, so it is picked first even if the
  // runner has not picked it yet when the others arrive.
  const uint32_t blocker = f.ctx(DRM_NPU_PRIORITY_REALTIME);
  const uint32_t high = f.ctx(DRM_NPU_PRIORITY_HIGH);
  const auto hung = hung_job();
  const Bo h = f.upload(hung);
  ASSERT_EQ(f.submit(blocker, h, hung.size(), {ref(h, kR)}, DRM_NPU_SUBMIT_SKIP_VALIDATION), 0);
  uint64_t normal_seqno = 0, high_seqno = 0;
  ASSERT_EQ(f.submit(ctx, cmd, bytes.size(), refs(), 0, &normal_seqno), 0);
  ASSERT_EQ(f.submit(high, cmd, bytes.size(), refs(), 0, &high_seqno), 0);
  drm_npu_wait wn{}, wh{};
  ASSERT_EQ(f.wait(ctx, normal_seqno, deadline_ms(8 * kMaxWatchdogMs), &wn), 0);
  ASSERT_EQ(f.wait(high, high_seqno, deadline_ms(8 * kMaxWatchdogMs), &wh), 0);
  EXPECT_LE(wh.start_ns, wn.start_ns) << "the HIGH job started after the NORMAL one";
}

}  // namespace
}  // namespace npu::abi
