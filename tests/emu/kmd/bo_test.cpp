// BO_CREATE / BO_INFO / BO_CLOSE and mmap.
#include "kmd_fixture.h"
#include "va_allocator.h"

namespace npu::emu::test {
namespace {

using kmd::VaAllocator;

TEST(KmdBo, CreateInfoClose) {
  Kmd kmd;
  Client c(kmd);
  drm_npu_bo_create cr{};
  cr.size = 5000;
  cr.flags = DRM_NPU_BO_DEVICE_READ_ONLY;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_BO_CREATE, &cr), 0);
  EXPECT_EQ(cr.handle, 1u);  // handles start at 1
  EXPECT_GE(cr.device_addr, VaAllocator::kBase);
  EXPECT_LT(cr.device_addr, VaAllocator::kEnd);
  EXPECT_EQ(cr.device_addr % VaAllocator::kAlign, 0u);

  drm_npu_bo_info info{};
  info.handle = cr.handle;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_BO_INFO, &info), 0);
  EXPECT_EQ(info.size, 8192u);  // page rounded
  EXPECT_EQ(info.flags, DRM_NPU_BO_DEVICE_READ_ONLY);
  EXPECT_EQ(info.device_addr, cr.device_addr);
  EXPECT_NE(info.mmap_offset, 0u);
  EXPECT_EQ(info.mmap_offset % 4096, 0u);

  drm_npu_bo_close cl{};
  cl.handle = cr.handle;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_BO_CLOSE, &cl), 0);
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_BO_INFO, &info), ENOENT);
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_BO_CLOSE, &cl), ENOENT);
}

TEST(KmdBo, Errors) {
  Kmd kmd;
  Client c(kmd);
  drm_npu_bo_create cr{};
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_BO_CREATE, &cr), EINVAL);  // size 0
  cr.size = 4096;
  cr.flags = 4;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_BO_CREATE, &cr), EINVAL);  // unknown flag
  cr.flags = 0;
  cr.device_addr = VaAllocator::kBase;  // an address without FIXED_VA
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_BO_CREATE, &cr), EINVAL);
  cr.device_addr = 0;
  cr.size = kmd.config().max_bo_size + 1;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_BO_CREATE, &cr), ENOMEM);

  drm_npu_bo_info info{};
  info.handle = 0;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_BO_INFO, &info), ENOENT);  // handle 0 is never valid
  info.handle = 42;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_BO_INFO, &info), ENOENT);

  const BoHandle b = c.bo(4096);
  drm_npu_bo_close cl{};
  cl.handle = b.handle;
  cl.pad = 1;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_BO_CLOSE, &cl), EINVAL);
}

TEST(KmdBo, DistinctNonOverlappingAddressesWithGuard) {
  Kmd kmd;
  Client c(kmd);
  const BoHandle a = c.bo(4096);
  const BoHandle b = c.bo(100000);
  const BoHandle d = c.bo(4096);
  EXPECT_GE(b.va, a.va + a.size + VaAllocator::kGuard);
  EXPECT_GE(d.va, b.va + b.size + VaAllocator::kGuard);
}

TEST(KmdBo, MmapRoundTripAndZeroFill) {
  Kmd kmd;
  Client c(kmd);
  const BoHandle b = c.bo(3 * 4096);
  std::byte* p1 = c.map(b);
  std::byte* p2 = c.map(b);
  ASSERT_NE(p1, nullptr);
  ASSERT_NE(p2, nullptr);
  ASSERT_NE(p1, p2);
  for (size_t i = 0; i < b.size; ++i) ASSERT_EQ(p1[i], std::byte{0}) << "byte " << i;
  for (size_t i = 0; i < b.size; ++i) p1[i] = std::byte(i * 7 + 3);
  for (size_t i = 0; i < b.size; ++i) ASSERT_EQ(p2[i], std::byte(i * 7 + 3)) << "byte " << i;
}

TEST(KmdBo, MmapErrors) {
  Kmd kmd;
  Client c(kmd);
  const BoHandle b = c.bo(4096);
  const int fd = c.fd();
  errno = 0;
  EXPECT_EQ(kmd.mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 12345 * 4096), MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);  // no BO at that offset
  EXPECT_EQ(kmd.mmap(nullptr, 8192, PROT_READ, MAP_SHARED, fd, b.mmap_offset), MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);  // longer than the BO
  EXPECT_EQ(kmd.mmap(nullptr, 0, PROT_READ, MAP_SHARED, fd, b.mmap_offset), MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(kmd.mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, b.mmap_offset), MAP_FAILED);
  EXPECT_EQ(errno, EINVAL);  // private mappings would not see the device
  EXPECT_EQ(kmd.mmap(nullptr, 4096, PROT_READ, MAP_SHARED, 9999, b.mmap_offset), MAP_FAILED);
  EXPECT_EQ(errno, EBADF);
}

TEST(KmdBo, MappingOutlivesHandleAndFile) {
  Kmd kmd;
  const int fd = kmd.open();
  drm_npu_bo_create cr{};
  cr.size = 4096;
  ASSERT_EQ(kmd.ioctl(fd, DRM_IOCTL_NPU_BO_CREATE, &cr), 0);
  drm_npu_bo_info info{};
  info.handle = cr.handle;
  ASSERT_EQ(kmd.ioctl(fd, DRM_IOCTL_NPU_BO_INFO, &info), 0);
  void* p = kmd.mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, info.mmap_offset);
  ASSERT_NE(p, MAP_FAILED);
  drm_npu_bo_close cl{};
  cl.handle = cr.handle;
  ASSERT_EQ(kmd.ioctl(fd, DRM_IOCTL_NPU_BO_CLOSE, &cl), 0);
  ASSERT_EQ(kmd.close(fd), 0);
  static_cast<volatile char*>(p)[100] = 42;  // still backed by the memfd pages
  EXPECT_EQ(static_cast<volatile char*>(p)[100], 42);
  EXPECT_EQ(kmd.munmap(p, 4096), 0);
}

TEST(KmdBo, AddressReusedAfterClose) {
  Kmd kmd;
  Client c(kmd);
  const BoHandle a = c.bo(4096);
  drm_npu_bo_close cl{};
  cl.handle = a.handle;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_BO_CLOSE, &cl), 0);
  const BoHandle b = c.bo(4096);
  EXPECT_EQ(b.va, a.va);
  EXPECT_NE(b.handle, a.handle);  // handles are not reused
}

TEST(KmdBo, FixedVa) {
  Kmd kmd;
  Client c(kmd);
  auto create = [&](uint64_t size, uint64_t va, drm_npu_bo_create* out = nullptr) {
    drm_npu_bo_create cr{};
    cr.size = size;
    cr.flags = DRM_NPU_BO_FIXED_VA;
    cr.device_addr = va;
    const int r = c.io(DRM_IOCTL_NPU_BO_CREATE, &cr);
    if (out != nullptr) *out = cr;
    return r;
  };
  const uint64_t base = VaAllocator::kBase + 0x100'0000;
  drm_npu_bo_create a{};
  ASSERT_EQ(create(100000, base, &a), 0);
  EXPECT_EQ(a.device_addr, base);
  drm_npu_bo_info info{};
  info.handle = a.handle;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_BO_INFO, &info), 0);
  EXPECT_EQ(info.device_addr, base);
  EXPECT_EQ(info.flags, DRM_NPU_BO_FIXED_VA);
  // Packed right behind it (no guard gap between user-placed BOs).
  EXPECT_EQ(create(4096, base + 2 * VaAllocator::kAlign), 0);
  // Overlaps.
  EXPECT_EQ(create(4096, base), EEXIST);
  EXPECT_EQ(create(4096, base + VaAllocator::kAlign), EEXIST);
  EXPECT_EQ(create(4 * VaAllocator::kAlign, base - 2 * VaAllocator::kAlign), EEXIST);
  // The guard gap after an automatically placed BO is taken too.
  const BoHandle autob = c.bo(4096);
  EXPECT_EQ(create(4096, autob.va), EEXIST);
  EXPECT_EQ(create(4096, autob.va + VaAllocator::kAlign), EEXIST);
  // Misaligned or outside the range.
  EXPECT_EQ(create(4096, base + 4096 * 100), EINVAL);
  EXPECT_EQ(create(4096, 0), EINVAL);
  EXPECT_EQ(create(4096, VaAllocator::kBase - VaAllocator::kAlign), EINVAL);
  EXPECT_EQ(create(4096, VaAllocator::kEnd), EINVAL);
  EXPECT_EQ(create(2 * VaAllocator::kAlign, VaAllocator::kEnd - VaAllocator::kAlign), EINVAL);
  // Freed ranges can be placed again.
  drm_npu_bo_close cl{};
  cl.handle = a.handle;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_BO_CLOSE, &cl), 0);
  EXPECT_EQ(create(4096, base), 0);
  // Automatic placement skips user-placed BOs.
  const BoHandle next = c.bo(8 * VaAllocator::kAlign);
  EXPECT_TRUE(next.va + next.size <= base || next.va >= base + 3 * VaAllocator::kAlign);
}

TEST(KmdBo, FixedVaJobRunsAtTheChosenAddresses) {
  Kmd kmd;
  Client c(kmd);
  const uint32_t ctx = c.ctx();
  const uint64_t src_va = VaAllocator::kBase + 0x4000'0000;
  const uint64_t dst_va = src_va + VaAllocator::kAlign;
  drm_npu_bo_create s{};
  s.size = 4096;
  s.flags = DRM_NPU_BO_FIXED_VA;
  s.device_addr = src_va;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_BO_CREATE, &s), 0);
  drm_npu_bo_create d = s;
  d.device_addr = dst_va;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_BO_CREATE, &d), 0);
  drm_npu_bo_info si{}, di{};
  si.handle = s.handle;
  di.handle = d.handle;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_BO_INFO, &si), 0);
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_BO_INFO, &di), 0);
  const BoHandle src{s.handle, src_va, si.size, si.mmap_offset};
  const BoHandle dst{d.handle, dst_va, di.size, di.mmap_offset};
  std::memset(c.map(src), 0x3c, 4096);
  const auto job = copy_job(src_va, dst_va, 4096);
  const BoHandle cmd = c.upload(job);
  uint64_t seqno = 0;
  ASSERT_EQ(c.submit(ctx, cmd, job.size(), {ref(cmd, kR), ref(src, kR), ref(dst, kW)}, 0, &seqno),
            0);
  drm_npu_wait w{};
  ASSERT_EQ(c.wait(ctx, seqno, deadline_ms(5000), &w), 0);
  ASSERT_EQ(w.status, DRM_NPU_JOB_OK);
  const std::byte* out = c.map(dst);
  for (int i = 0; i < 4096; ++i) ASSERT_EQ(out[i], std::byte{0x3c});
}

}  // namespace
}  // namespace npu::emu::test
