// The ioctl choke point: descriptors, request decoding, argument copy-in/out.
#include <sys/ioctl.h>

#include <set>

#include "kmd_fixture.h"

namespace npu::emu::test {
namespace {

TEST(KmdDispatch, OpenGivesDistinctRealDescriptors) {
  Kmd a;
  Kmd b;
  std::set<int> fds;
  for (int i = 0; i < 4; ++i) {
    const int fa = a.open();
    const int fb = b.open();
    ASSERT_GE(fa, 0);
    ASSERT_GE(fb, 0);
    fds.insert(fa);
    fds.insert(fb);
  }
  EXPECT_EQ(fds.size(), 8u);
  for (int fd : fds) EXPECT_EQ(a.close(fd) == 0 || b.close(fd) == 0, true);
}

TEST(KmdDispatch, CloseTwiceIsEbadf) {
  Kmd kmd;
  const int fd = kmd.open();
  ASSERT_GE(fd, 0);
  EXPECT_EQ(kmd.close(fd), 0);
  errno = 0;
  EXPECT_EQ(kmd.close(fd), -1);
  EXPECT_EQ(errno, EBADF);
}

TEST(KmdDispatch, UnknownFdIsEbadf) {
  Kmd kmd;
  drm_npu_get_param p{};
  EXPECT_EQ(kmd.ioctl(12345, DRM_IOCTL_NPU_GET_PARAM, &p), -1);
  EXPECT_EQ(errno, EBADF);
  const int fd = kmd.open();
  ASSERT_EQ(kmd.close(fd), 0);
  EXPECT_EQ(kmd.ioctl(fd, DRM_IOCTL_NPU_GET_PARAM, &p), -1);
  EXPECT_EQ(errno, EBADF);
}

TEST(KmdDispatch, UnknownRequestIsEinval) {
  Kmd kmd;
  Client c(kmd);
  drm_npu_get_param p{};
  // Past the table.
  EXPECT_EQ(c.io(DRM_IOWR(DRM_COMMAND_BASE + DRM_NPU_NUM_IOCTLS, drm_npu_get_param), &p), EINVAL);
  // A core DRM ioctl number (below DRM_COMMAND_BASE).
  EXPECT_EQ(c.io(DRM_IOWR(0x01, drm_npu_get_param), &p), EINVAL);
  // Another ioctl type.
  EXPECT_EQ(c.io(_IOWR('x', DRM_COMMAND_BASE + DRM_NPU_GET_PARAM, drm_npu_get_param), &p), EINVAL);
}

TEST(KmdDispatch, WrongSizeOrDirectionIsEinval) {
  Kmd kmd;
  Client c(kmd);
  drm_npu_wait w{};  // big enough for every variant below
  EXPECT_EQ(c.io(_IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, DRM_COMMAND_BASE + DRM_NPU_GET_PARAM,
                      sizeof(drm_npu_get_param) - 8),
                 &w),
            EINVAL);
  EXPECT_EQ(c.io(_IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, DRM_COMMAND_BASE + DRM_NPU_GET_PARAM,
                      sizeof(drm_npu_get_param) + 8),
                 &w),
            EINVAL);
  EXPECT_EQ(c.io(DRM_IOW(DRM_COMMAND_BASE + DRM_NPU_GET_PARAM, drm_npu_get_param), &w), EINVAL);
  EXPECT_EQ(c.io(DRM_IOR(DRM_COMMAND_BASE + DRM_NPU_GET_PARAM, drm_npu_get_param), &w), EINVAL);
}

TEST(KmdDispatch, NullArgIsEfault) {
  Kmd kmd;
  Client c(kmd);
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, nullptr), EFAULT);
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_SUBMIT, nullptr), EFAULT);
  EXPECT_EQ(c.io(DRM_IOCTL_NPU_WAIT, nullptr), EFAULT);
}

TEST(KmdDispatch, ArgumentIsCopiedOutOnSuccess) {
  Kmd kmd;
  Client c(kmd);
  drm_npu_get_param p{};
  p.param = DRM_NPU_PARAM_PLATFORM;
  p.value = 0xdead;
  ASSERT_EQ(c.io(DRM_IOCTL_NPU_GET_PARAM, &p), 0);
  EXPECT_EQ(p.value, DRM_NPU_PLATFORM_EMULATOR);
}

TEST(KmdDispatch, FilesAreIndependent) {
  Kmd kmd;
  Client a(kmd);
  Client b(kmd);
  // Handles and context ids are per file: both start at 1.
  EXPECT_EQ(a.bo(4096).handle, 1u);
  EXPECT_EQ(b.bo(4096).handle, 1u);
  EXPECT_EQ(a.ctx(), 1u);
  EXPECT_EQ(b.ctx(), 1u);
  // A context of one file is unknown in the other.
  EXPECT_EQ(b.destroy_ctx(a.ctx()), ENOENT);
}

}  // namespace
}  // namespace npu::emu::test
