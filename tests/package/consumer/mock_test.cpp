// Uses the installed npu::testing: the device mock delegating to the emulator, with a fault
// injected into the next allocation.
#include <gmock/gmock.h>

#include "npu/buffer.h"
#include "npu/device.h"
#include "npu/testing/mock_kernel.h"

using ::testing::_;
using ::testing::NiceMock;

TEST(Consumer, MockKernelInjectsAllocationFailure) {
  auto kernel = std::make_shared<NiceMock<npu::testing::FakeNpuKernel>>();
  auto dev = npu::Device::open_with(kernel);
  ASSERT_TRUE(dev) << dev.error().message;
  EXPECT_CALL(*kernel, ioctl(_, DRM_IOCTL_NPU_BO_CREATE, _)).Times(2);
  kernel->fail_next_bo_create(ENOMEM);
  auto failed = npu::Buffer::allocate(*dev, 4096);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().code, ENOMEM);
  auto ok = npu::Buffer::allocate(*dev, 4096);
  EXPECT_TRUE(ok) << ok.error().message;
}
