// BO_CREATE, BO_INFO, BO_CLOSE, mmap of BOs, VA placement and guard gaps, BO_WAIT.
#include "abi.h"

namespace npu::abi {
namespace {

int create(const File& f, drm_npu_bo_create& c) {
  return f.io(DRM_IOCTL_NPU_BO_CREATE, &c);
}

TEST(AbiBo, CreateGivesAHandleAndAnAlignedAddress) {
  File f;
  const uint64_t align = f.param(DRM_NPU_PARAM_VA_ALIGN);
  const Bo a = f.bo(1);
  const Bo b = f.bo(5000);
  EXPECT_NE(a.handle, 0u);
  EXPECT_NE(b.handle, a.handle);
  EXPECT_EQ(a.size, 4096u) << "sizes round up to pages";
  EXPECT_EQ(b.size, 8192u);
  EXPECT_EQ(a.va % align, 0u);
  EXPECT_EQ(b.va % align, 0u);
  EXPECT_GE(a.va, f.param(DRM_NPU_PARAM_VA_START));
  EXPECT_LE(b.va + b.size, f.param(DRM_NPU_PARAM_VA_END));
  // Automatic placement leaves an unmapped guard gap after a BO.
  const uint64_t lo = std::min(a.va, b.va);
  const uint64_t lo_size = lo == a.va ? a.size : b.size;
  EXPECT_GT(std::max(a.va, b.va), lo + lo_size) << "no guard gap between the BOs";
  drm_npu_bo_info i{};
  i.handle = b.handle;
  ASSERT_EQ(f.io(DRM_IOCTL_NPU_BO_INFO, &i), 0);
  EXPECT_EQ(i.flags, 0u);
  EXPECT_EQ(i.size, b.size);
  EXPECT_EQ(i.device_addr, b.va);
}

TEST(AbiBo, CreateArgumentsAreChecked) {
  File f;
  drm_npu_bo_create c{};
  EXPECT_EQ(create(f, c), EINVAL) << "size 0";
  c.size = 4096;
  c.flags = 1u << 20;
  EXPECT_EQ(create(f, c), EINVAL) << "unknown flag";
  c.flags = 0;
  c.device_addr = f.param(DRM_NPU_PARAM_VA_START);
  EXPECT_EQ(create(f, c), EINVAL) << "an address without FIXED_VA";
  c.device_addr = 0;
  c.size = f.param(DRM_NPU_PARAM_MAX_BO_SIZE) + 4096;
  EXPECT_EQ(create(f, c), ENOMEM) << "above MAX_BO_SIZE";
}

TEST(AbiBo, FixedVaPlacementAndItsErrors) {
  File f;
  const uint64_t align = f.param(DRM_NPU_PARAM_VA_ALIGN);
  const uint64_t end = f.param(DRM_NPU_PARAM_VA_END);
  const uint64_t at = end - 64 * align;  // far from where automatic placement starts
  const Bo b = f.bo(4096, DRM_NPU_BO_FIXED_VA, at);
  EXPECT_EQ(b.va, at);
  drm_npu_bo_create c{};
  c.size = 4096;
  c.flags = DRM_NPU_BO_FIXED_VA;
  c.device_addr = at;
  EXPECT_EQ(create(f, c), EEXIST) << "overlaps the BO above";
  c.device_addr = at + align / 2;
  EXPECT_EQ(create(f, c), EINVAL) << "misaligned";
  c.device_addr = end;
  EXPECT_EQ(create(f, c), EINVAL) << "outside the range";
  c.device_addr = 0;
  EXPECT_EQ(create(f, c), EINVAL) << "address 0";
  // Another file has an address space of its own: the same address is free there.
  File g;
  EXPECT_EQ(g.bo(4096, DRM_NPU_BO_FIXED_VA, at).va, at);
}

TEST(AbiBo, InfoAndCloseOfUnknownHandles) {
  File f;
  const Bo b = f.bo(4096);
  drm_npu_bo_info i{};
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_BO_INFO, &i), ENOENT) << "handle 0";
  i.handle = b.handle + 1000;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_BO_INFO, &i), ENOENT);
  File other;
  i.handle = b.handle;
  EXPECT_EQ(other.io(DRM_IOCTL_NPU_BO_INFO, &i), ENOENT) << "another file's handle";
  drm_npu_bo_close c{};
  c.handle = b.handle;
  c.pad = 1;
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_BO_CLOSE, &c), EINVAL);
  EXPECT_EQ(f.bo_close(0), ENOENT);
  EXPECT_EQ(f.bo_close(b.handle), 0);
  EXPECT_EQ(f.bo_close(b.handle), ENOENT) << "closed twice";
  EXPECT_EQ(f.io(DRM_IOCTL_NPU_BO_INFO, &i), ENOENT) << "a closed handle";
}

TEST(AbiMmap, BadMappingsAreRefused) {
  File f;
  const Bo b = f.bo(8192);
  auto try_map = [&](size_t len, int flags, uint64_t off) {
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, flags, f.fd(), static_cast<off_t>(off));
    const int err = p == MAP_FAILED ? errno : 0;
    if (p != MAP_FAILED) ::munmap(p, len);
    return err;
  };
  EXPECT_EQ(try_map(8192, MAP_SHARED, b.mmap_offset), 0);
  EXPECT_EQ(try_map(4096, MAP_SHARED, b.mmap_offset), 0) << "a prefix may be mapped";
  EXPECT_EQ(try_map(3 * 4096, MAP_SHARED, b.mmap_offset), EINVAL) << "longer than the BO";
  EXPECT_EQ(try_map(8192, MAP_PRIVATE, b.mmap_offset), EINVAL) << "must be MAP_SHARED";
  EXPECT_EQ(try_map(4096, MAP_SHARED, b.mmap_offset + (1u << 30)), EINVAL) << "no BO there";
  File other;
  void* p =
      ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, other.fd(), static_cast<off_t>(b.mmap_offset));
  EXPECT_EQ(p, MAP_FAILED) << "another file's offset";
  if (p != MAP_FAILED) ::munmap(p, 4096);
  ASSERT_EQ(f.bo_close(b.handle), 0);
  EXPECT_EQ(try_map(4096, MAP_SHARED, b.mmap_offset), EINVAL) << "a closed BO";
}

TEST(AbiMmap, MappingOutlivesTheHandle) {
  File f;
  const Bo b = f.bo(4096);
  std::byte* p = f.map(b);
  ASSERT_NE(p, nullptr);
  p[100] = std::byte{42};
  ASSERT_EQ(f.bo_close(b.handle), 0);
  EXPECT_EQ(p[100], std::byte{42});
  p[101] = std::byte{7};  // still writable: the pages live while mapped
  EXPECT_EQ(p[101], std::byte{7});
}

int bo_wait(const File& f, uint32_t handle, int64_t deadline, uint32_t flags = 0) {
  drm_npu_bo_wait w{};
  w.handle = handle;
  w.flags = flags;
  w.timeout_ns = deadline;
  return f.io(DRM_IOCTL_NPU_BO_WAIT, &w);
}

TEST(AbiBoWait, IdleBusyAndErrors) {
  NPU_ABI_REQUIRE(1, 3, DRM_NPU_CAP_BO_WAIT);
  NPU_ABI_REQUIRE_HANG();
  File f;
  const Bo data = f.bo(4096);
  EXPECT_EQ(bo_wait(f, data.handle, 0), 0);
  EXPECT_EQ(bo_wait(f, 0, 0), ENOENT);
  EXPECT_EQ(bo_wait(f, data.handle, 0, 1), EINVAL);
  EXPECT_EQ(bo_wait(f, data.handle, -5), EINVAL);
  const uint32_t ctx = f.ctx();
  const auto hung = hung_job();
  const Bo h = f.upload(hung);
  ASSERT_EQ(
      f.submit(ctx, h, hung.size(), {ref(h, kR), ref(data, kRW)}, DRM_NPU_SUBMIT_SKIP_VALIDATION),
      0);
  EXPECT_EQ(bo_wait(f, data.handle, 0), EBUSY);
  EXPECT_EQ(bo_wait(f, data.handle, deadline_ms(10)), ETIMEDOUT);
  EXPECT_EQ(bo_wait(f, data.handle, deadline_ms(4 * kMaxWatchdogMs)), 0)
      << "the watchdog's end of the job makes it idle";
}

}  // namespace
}  // namespace npu::abi
