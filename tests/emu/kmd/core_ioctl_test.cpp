// The core DRM ioctls an accel node answers (DRM_IOCTL_VERSION, GET_CAP), the other core
// numbers, and checked user access (Kmd::Options::checked_user_access): wild pointers are
// EFAULT, never a crash.
#include <string>

#include "kmd_fixture.h"

namespace npu::emu::test {
namespace {

TEST(KmdCore, VersionReportsTheDriverAsDrmCopyFieldDoes) {
  Kmd kmd;
  Client c(kmd);
  drm_version v{};
  ASSERT_EQ(c.io(DRM_IOCTL_VERSION, &v), 0);  // lengths only
  EXPECT_EQ(v.version_major, DRM_NPU_API_VERSION_MAJOR);
  EXPECT_EQ(v.version_minor, DRM_NPU_API_VERSION_MINOR);
  EXPECT_EQ(v.name_len, std::string_view(DRM_NPU_DRIVER_NAME).size());
  ASSERT_GT(v.date_len, 0u);
  ASSERT_GT(v.desc_len, 0u);
  std::string name(v.name_len, '\0'), date(v.date_len, '\0'), desc(v.desc_len, '\0');
  v.name = name.data();
  v.date = date.data();
  v.desc = desc.data();
  ASSERT_EQ(c.io(DRM_IOCTL_VERSION, &v), 0);
  EXPECT_EQ(name, DRM_NPU_DRIVER_NAME);
  EXPECT_EQ(date.size(), 8u);
  // A short buffer gets a prefix and the full length, with nothing written past it.
  char two[4] = {'x', 'x', 'x', 'x'};
  drm_version s{};
  s.name = two;
  s.name_len = 2;
  ASSERT_EQ(c.io(DRM_IOCTL_VERSION, &s), 0);
  EXPECT_EQ(std::string(two, 4), std::string(DRM_NPU_DRIVER_NAME).substr(0, 2) + "xx");
  EXPECT_EQ(s.name_len, std::string_view(DRM_NPU_DRIVER_NAME).size());
}

TEST(KmdCore, GetCapAnswersWhatAnAccelDriverHas) {
  Kmd kmd;
  Client c(kmd);
  drm_get_cap cap{};
  cap.capability = DRM_CAP_TIMESTAMP_MONOTONIC;
  ASSERT_EQ(c.io(DRM_IOCTL_GET_CAP, &cap), 0);
  EXPECT_EQ(cap.value, 1u);
  cap.capability = DRM_CAP_SYNCOBJ;
  ASSERT_EQ(c.io(DRM_IOCTL_GET_CAP, &cap), 0);
  EXPECT_EQ(cap.value, 0u);
  cap.capability = DRM_CAP_DUMB_BUFFER;  // modesetting only
  EXPECT_EQ(c.io(DRM_IOCTL_GET_CAP, &cap), EOPNOTSUPP);
}

TEST(KmdCore, OtherCoreIoctlsAreEinval) {
  Kmd kmd;
  Client c(kmd);
  drm_unique u{};
  EXPECT_EQ(c.io(DRM_IOCTL_GET_UNIQUE, &u), EINVAL);
  drm_gem_close g{};
  EXPECT_EQ(c.io(DRM_IOCTL_GEM_CLOSE, &g), EINVAL);
  drm_prime_handle p{};
  EXPECT_EQ(c.io(DRM_IOCTL_PRIME_HANDLE_TO_FD, &p), EINVAL);
  // A driver number past the table, and a non-DRM request.
  drm_npu_get_param gp{};
  EXPECT_EQ(c.io(DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_NUM_IOCTLS, drm_npu_get_param), &gp), EINVAL);
  int dummy = 0;
  EXPECT_EQ(c.io(_IOR('T', 1, int), &dummy), EINVAL);
}

TEST(KmdCheckedAccess, WildPointersAreEfault) {
  Kmd kmd({}, Kmd::Options{.checked_user_access = true});
  Client c(kmd);
  const auto wild = reinterpret_cast<void*>(uintptr_t{0x10});
  // The argument itself.
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, wild), EFAULT);
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, nullptr), EFAULT);
  // Pointers inside it: SUBMIT's BO list, QUERY's data, VERSION's strings.
  const uint32_t ctx = c.ctx();
  const auto bytes = empty_job();
  const BoHandle cmd = c.upload(bytes);
  drm_npu_submit s{};
  s.ctx_id = ctx;
  s.cmd_handle = cmd.handle;
  s.bo_count = 1;
  s.cmd_size = bytes.size();
  s.bos = 0x10;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_SUBMIT, &s), EFAULT);
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_DEVICE_INFO;
  q.size = sizeof(drm_npu_device_info);
  q.data = 0x10;
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_QUERY, &q), EFAULT);
  drm_version v{};
  v.name_len = 8;
  v.name = static_cast<char*>(wild);
  EXPECT_EQ(c.io(DRM_IOCTL_VERSION, &v), EFAULT);
  // A read-only page cannot take the answer.
  void* ro = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(ro, MAP_FAILED);
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, ro), EFAULT);
  munmap(ro, 4096);
  // Valid heap pointers still work.
  auto gp = std::make_unique<drm_npu_get_param>();
  gp->param = DRM_NPU_PARAM_API_VERSION;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, gp.get()), 0);
  EXPECT_EQ(gp->value, uint64_t{(DRM_NPU_API_VERSION_MAJOR << 16) | DRM_NPU_API_VERSION_MINOR});
}

}  // namespace
}  // namespace npu::emu::test
