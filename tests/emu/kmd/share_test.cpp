// API 1.3 buffer sharing in the mock driver (BO_EXPORT, BO_IMPORT): the same memory in two
// files, PRIME's own-import rule, lifetimes (an export outliving its handle and its file
// while a job uses the memory), refusals; and the cross-job race checker (QUERY JOB_RACES) on
// a shared BO, with and without a fence between the jobs.
#include <fcntl.h>
#include <unistd.h>

#include "kmd_fixture.h"

namespace npu::emu::test {
namespace {

int export_bo(Client& c, uint32_t handle, int* fd, uint32_t flags = DRM_NPU_EXPORT_CLOEXEC) {
  drm_npu_bo_export e{};
  e.handle = handle;
  e.flags = flags;
  const int r = c.io(DRM_IOCTL_NPU_BO_EXPORT, &e);
  *fd = e.fd;
  return r;
}

int import_bo(Client& c, int fd, drm_npu_bo_import* out, uint32_t flags = 0, uint64_t va = 0) {
  drm_npu_bo_import im{};
  im.fd = fd;
  im.flags = flags;
  im.device_addr = va;
  const int r = c.io(DRM_IOCTL_NPU_BO_IMPORT, &im);
  *out = im;
  return r;
}

TEST(KmdShare, ImportSharesTheMemory) {
  Kmd kmd;
  Client a(kmd), b(kmd);
  const BoHandle bo = a.bo(8192);
  int fd = -1;
  ASSERT_EQ(export_bo(a, bo.handle, &fd), 0);
  EXPECT_EQ(::fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  drm_npu_bo_import im{};
  ASSERT_EQ(import_bo(b, fd, &im), 0);
  EXPECT_NE(im.handle, 0u);
  EXPECT_EQ(im.size, bo.size);
  EXPECT_EQ(im.flags & DRM_NPU_BO_IMPORT_EXISTED, 0u);
  drm_npu_bo_info info{};
  info.handle = im.handle;
  ASSERT_EQ(b.io(DRM_IOCTL_NPU_BO_INFO, &info), 0);
  std::byte* pa = a.map(bo);
  std::byte* pb = b.map({im.handle, im.device_addr, info.size, info.mmap_offset});
  ASSERT_TRUE(pa != nullptr && pb != nullptr);
  pa[4000] = std::byte{77};
  EXPECT_EQ(pb[4000], std::byte{77}) << "one memory, two files";
  // Importing again, or into the exporting file, gives the existing handle.
  drm_npu_bo_import again{};
  ASSERT_EQ(import_bo(b, fd, &again), 0);
  EXPECT_EQ(again.handle, im.handle);
  EXPECT_NE(again.flags & DRM_NPU_BO_IMPORT_EXISTED, 0u);
  drm_npu_bo_import own{};
  ASSERT_EQ(import_bo(a, fd, &own), 0);
  EXPECT_EQ(own.handle, bo.handle);
  EXPECT_NE(own.flags & DRM_NPU_BO_IMPORT_EXISTED, 0u);
  // FIXED_VA placement in a third file.
  Client c(kmd);
  drm_npu_bo_import fixed{};
  ASSERT_EQ(import_bo(c, fd, &fixed, DRM_NPU_BO_FIXED_VA, 0x200000000ull), 0);
  EXPECT_EQ(fixed.device_addr, 0x200000000ull);
  ::close(fd);
}

TEST(KmdShare, RefusalsAreTheKernels) {
  Kmd kmd;
  Client a(kmd);
  const BoHandle bo = a.bo(4096);
  int fd = -1;
  EXPECT_EQ(export_bo(a, 999, &fd), ENOENT);
  EXPECT_EQ(export_bo(a, bo.handle, &fd, 2), EINVAL) << "unknown flags";
  ASSERT_EQ(export_bo(a, bo.handle, &fd), 0);
  drm_npu_bo_import im{};
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  EXPECT_EQ(import_bo(a, p[0], &im), EINVAL) << "a pipe is no exported BO";
  EXPECT_EQ(import_bo(a, 9999, &im), EBADF);
  Client b(kmd);
  EXPECT_EQ(import_bo(b, fd, &im, 1u << 20), EINVAL) << "unknown flags";
  EXPECT_EQ(import_bo(b, fd, &im, 0, 0x200000000ull), EINVAL) << "an address without FIXED_VA";
  EXPECT_EQ(import_bo(b, fd, &im, DRM_NPU_BO_FIXED_VA, 0x200000001ull), EINVAL) << "misaligned";
  // Another device's export is foreign here.
  Kmd other;
  Client o(other);
  EXPECT_EQ(import_bo(o, fd, &im), EINVAL);
  ::close(fd);
  ::close(p[0]);
  ::close(p[1]);
}

// The exporting file closes (handle gone) while a job of the importing file still waits to
// use the memory: the job runs on it, and the export descriptor alone imports it later.
TEST(KmdShare, ExportOutlivesItsHandleAndItsFile) {
  Kmd kmd(config_with_watchdog(150));
  Client b(kmd);
  int fd = -1;
  const auto before = Kmd::bo_memory_bytes();
  {
    Client a(kmd);
    const BoHandle bo = a.bo(4096);
    std::byte* pa = a.map(bo);
    for (int i = 0; i < 64; ++i) pa[i] = std::byte(i + 1);
    ASSERT_EQ(export_bo(a, bo.handle, &fd), 0);
  }  // a closed: no handle of the memory left, the export holds it
  EXPECT_GT(Kmd::bo_memory_bytes(), before);
  drm_npu_bo_import im{};
  ASSERT_EQ(import_bo(b, fd, &im), 0);
  const BoHandle shared{im.handle, im.device_addr, im.size, 0};
  const BoHandle dst = b.bo(4096);
  const uint32_t ctx = b.ctx();
  const auto copy = copy_job(shared.va, dst.va, 64);
  const BoHandle cmd = b.upload(copy);
  uint64_t seqno = 0;
  ASSERT_EQ(
      b.submit(ctx, cmd, copy.size(), {ref(cmd, kR), ref(shared, kR), ref(dst, kW)}, 0, &seqno), 0);
  drm_npu_bo_close cl{};
  cl.handle = im.handle;
  ASSERT_EQ(b.io(DRM_IOCTL_NPU_BO_CLOSE, &cl), 0);  // the job holds the memory now
  ASSERT_EQ(b.wait(ctx, seqno, deadline_ms(5000)), 0);
  const std::byte* out = b.map(dst);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(out[i], std::byte(i + 1)) << i;
  // The descriptor alone still names the memory.
  ASSERT_EQ(import_bo(b, fd, &im), 0);
  ::close(fd);
}

// Two contexts on one shared BO: a job writes it while queued behind a hung job, and a job of
// another context reads it. Without a fence the checker reports a RAW race; with the first
// job's fence as the second's in-fence it reports none.
TEST(KmdShare, RaceCheckerSeesUnorderedJobsAndFencesOrderThem) {
  Kmd kmd(config_with_watchdog(150));
  Client a(kmd), b(kmd);
  // The blocker is REALTIME: picked first even if the runner is late, so the writer is still
  // pending when the reader is submitted.
  uint32_t blocker = a.ctx(DRM_NPU_PRIORITY_REALTIME);
  const uint32_t writer = a.ctx(), reader = b.ctx();
  const BoHandle shared = a.bo(4096), src = a.bo(4096);
  int fd = -1;
  ASSERT_EQ(export_bo(a, shared.handle, &fd), 0);
  drm_npu_bo_import im{};
  ASSERT_EQ(import_bo(b, fd, &im), 0);
  const BoHandle bshared{im.handle, im.device_addr, im.size, 0};
  const BoHandle dst = b.bo(4096);
  const auto hung = hung_job();
  const BoHandle h = a.upload(hung);
  for (bool fenced : {false, true}) {
    ASSERT_EQ(a.submit(blocker, h, hung.size(), {ref(h, kR)}, kHangFlags), 0);  // holds the device
    const auto write = copy_job(src.va, shared.va + 256, 512);
    const BoHandle wc = a.upload(write);
    drm_npu_submit s{};
    drm_npu_bo_ref wrefs[3] = {ref(wc, kR), ref(src, kR), ref(shared, kW)};
    s.ctx_id = writer;
    s.flags = DRM_NPU_SUBMIT_FENCE_OUT | DRM_NPU_SUBMIT_RACECHECK;
    s.cmd_handle = wc.handle;
    s.bo_count = 3;
    s.cmd_size = write.size();
    s.bos = reinterpret_cast<uintptr_t>(wrefs);
    ASSERT_EQ(a.io(DRM_IOCTL_NPU_SUBMIT, &s), 0);
    const int wfence = s.fence_fd;
    const auto read = copy_job(bshared.va + 512, dst.va, 512);
    const BoHandle rc = b.upload(read);
    drm_npu_bo_ref rrefs[3] = {ref(rc, kR), ref(bshared, kR), ref(dst, kW)};
    int32_t in[1] = {wfence};
    drm_npu_submit r{};
    r.ctx_id = reader;
    r.flags = DRM_NPU_SUBMIT_RACECHECK;
    r.cmd_handle = rc.handle;
    r.bo_count = 3;
    r.cmd_size = read.size();
    r.bos = reinterpret_cast<uintptr_t>(rrefs);
    r.in_fences = fenced ? reinterpret_cast<uintptr_t>(in) : 0;
    r.in_fence_count = fenced ? 1 : 0;
    ASSERT_EQ(b.io(DRM_IOCTL_NPU_SUBMIT, &r), 0);
    std::vector<std::byte> raw(sizeof(drm_npu_job_races) + 8 * sizeof(drm_npu_job_race));
    drm_npu_query q{};
    q.type = DRM_NPU_QUERY_JOB_RACES;
    q.size = static_cast<uint32_t>(raw.size());
    q.arg0 = reader;
    q.arg1 = r.seqno;
    q.data = reinterpret_cast<uintptr_t>(raw.data());
    ASSERT_EQ(b.io(DRM_IOCTL_NPU_QUERY, &q), 0);
    drm_npu_job_races hdr{};
    std::memcpy(&hdr, raw.data(), sizeof(hdr));
    EXPECT_NE(hdr.flags & DRM_NPU_HAZARDS_CHECKED, 0u);
    if (fenced) {
      EXPECT_EQ(hdr.total, 0u) << "the fence orders the jobs";
    } else {
      ASSERT_EQ(hdr.num_races, 1u);
      drm_npu_job_race race{};
      std::memcpy(&race, raw.data() + sizeof(hdr), sizeof(race));
      EXPECT_EQ(race.kind, uint32_t{DRM_NPU_HAZARD_RAW});
      EXPECT_NE(race.flags & DRM_NPU_RACE_OTHER_FILE, 0u);
      EXPECT_EQ(race.bo_handle, im.handle);
      EXPECT_EQ(race.begin, 512u) << "the bytes both touch: [512, 768)";
      EXPECT_EQ(race.end, 768u);
      EXPECT_EQ(race.first.cmd_index, 3u) << "the writer's DMA_STORE";
      EXPECT_EQ(race.first.opcode, uint16_t{NPU_OP_DMA_STORE});
      EXPECT_EQ(race.second.cmd_index, 0u) << "the reader's DMA_LOAD";
    }
    // Drain: the hung job is reset, the writer and reader run.
    drm_npu_wait w{};
    ASSERT_EQ(b.wait(reader, r.seqno, deadline_ms(10'000), &w), 0);
    ::close(wfence);
    blocker = a.ctx(DRM_NPU_PRIORITY_REALTIME);  // the old one is banned: a new one
  }
  ::close(fd);
}

}  // namespace
}  // namespace npu::emu::test
