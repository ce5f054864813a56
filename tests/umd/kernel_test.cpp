// The seam itself: backend selection (open_kernel, NPU_DEVICE, the registry), the ioctl
// tracer, and libnpu's single EINTR retry loop.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <string>
#include <vector>

#include "npu/buffer.h"
#include "npu/context.h"
#include "npu/device.h"
#include "npu/emu/backend.h"
#include "npu/emu/emulator_kernel.h"
#include "npu/kernel.h"
#include "npu/testing/mock_kernel.h"
#include "npu/tracing_kernel.h"

namespace npu {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::NiceMock;
using namespace std::chrono_literals;

class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~EnvGuard() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(OpenKernel, DefaultDeviceIsTheEmulator) {
  EnvGuard env("NPU_DEVICE", nullptr);
  EXPECT_EQ(default_device(), "emu:");
  auto dev = Device::open();
  ASSERT_TRUE(dev) << dev.error().message;
  EXPECT_EQ(dev->path(), "emu:");
  EXPECT_EQ(dev->params().platform, uint32_t{DRM_NPU_PLATFORM_EMULATOR});
}

TEST(OpenKernel, NpuDeviceSelectsTheBackend) {
  EnvGuard env("NPU_DEVICE", "nosuch:thing");
  auto dev = Device::open();
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error().code, ENODEV);
  EXPECT_THAT(dev.error().message, HasSubstr("no backend for scheme 'nosuch'"));
  // An explicit argument wins over the environment.
  EXPECT_TRUE(Device::open("emu:"));
}

TEST(OpenKernel, EmulatorConfigErrorsNameTheFile) {
  auto k = open_kernel("emu:/nonexistent/dir/device.json");
  ASSERT_FALSE(k);
  EXPECT_THAT(k.error().message, HasSubstr("/nonexistent/dir/device.json"));
}

TEST(OpenKernel, MissingDeviceNodeFailsToOpen) {
  auto dev = Device::open("/nonexistent/accel0");
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error().code, ENOENT);
  EXPECT_THAT(dev.error().message, HasSubstr("open: device /nonexistent/accel0"));
}

TEST(OpenKernel, RegisteredBackendIsChosenByScheme) {
  int made = 0;
  ASSERT_TRUE(register_kernel_backend(
      "unit-test", [&made](std::string_view) -> Expected<std::shared_ptr<KernelInterface>> {
        ++made;
        return std::shared_ptr<KernelInterface>(std::make_shared<emu::EmulatorKernel>());
      }));
  auto dev = Device::open("unit-test:anything");
  ASSERT_TRUE(dev) << dev.error().message;
  EXPECT_EQ(made, 1);
  auto again = register_kernel_backend("unit-test", {});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, EEXIST);
}

TEST(OpenKernel, EmulatorBackendRegistersItselfOnce) {
  // Linking npu::emu registered "emu" before main(); the explicit call is idempotent, and
  // the scheme stays taken for other factories.
  EXPECT_TRUE(emu::register_backend());
  EXPECT_TRUE(emu::register_backend());
  auto taken = register_kernel_backend("emu", {});
  ASSERT_FALSE(taken);
  EXPECT_EQ(taken.error().code, EEXIST);
  set_ioctl_tracing(false);  // a TracingKernel would wrap it
  auto k = open_kernel("emu:");
  ASSERT_TRUE(k) << k.error().message;
  EXPECT_NE(dynamic_cast<emu::EmulatorKernel*>(k->get()), nullptr);
}

TEST(TracingKernel, DecodesEveryIoctlAndPreservesErrno) {
  std::vector<std::string> lines;
  auto traced =
      std::make_shared<TracingKernel>(std::make_shared<emu::EmulatorKernel>(),
                                      [&lines](std::string_view l) { lines.emplace_back(l); });
  auto dev = Device::open_with(traced);
  ASSERT_TRUE(dev);
  auto ctx = Context::create(*dev);
  ASSERT_TRUE(ctx);
  CommandBuffer cb(*dev);
  auto job = ctx->submit(cb);
  ASSERT_TRUE(job);
  ASSERT_TRUE(job->wait(5s));
  auto bad = Buffer::allocate(*dev, 0);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, EINVAL) << "errno survives the tracer";

  auto has = [&](const std::string& needle) {
    for (const auto& l : lines) {
      if (l.find(needle) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("open emu: -> "));
  EXPECT_TRUE(has("GET_PARAM param=SRAM_SIZE index=0 -> 0 value="));
  EXPECT_TRUE(has("CTX_CREATE priority=1 -> 0 ctx="));
  EXPECT_TRUE(has("SUBMIT ctx=" + std::to_string(ctx->id())));
  EXPECT_TRUE(has("-> 0 seqno=1"));
  EXPECT_TRUE(has("WAIT ctx="));
  EXPECT_TRUE(has("status=ok"));
  EXPECT_TRUE(has("BO_CREATE size=0 flags=0x0 va=0x0 -> -1 EINVAL (Invalid argument)"));
  EXPECT_TRUE(has(" us)"));
}

TEST(TracingKernel, EnabledProgrammaticallyThroughOpenKernel) {
  set_ioctl_tracing(true);
  auto k = open_kernel("emu:");
  set_ioctl_tracing(false);
  ASSERT_TRUE(k);
  EXPECT_NE(dynamic_cast<TracingKernel*>(k->get()), nullptr);
  auto plain = open_kernel("emu:");
  ASSERT_TRUE(plain);
  EXPECT_EQ(dynamic_cast<TracingKernel*>(plain->get()), nullptr);
}

TEST(DoIoctl, RetriesEveryIoctlOnEintr) {
  auto kernel = std::make_shared<NiceMock<testing::FakeNpuKernel>>();
  auto dev = Device::open_with(kernel);
  ASSERT_TRUE(dev);
  kernel->fail_next(DRM_IOCTL_NPU_CTX_CREATE, EINTR, 5);
  kernel->fail_next(DRM_IOCTL_NPU_BO_CREATE, EINTR, 2);
  auto ctx = Context::create(*dev);
  ASSERT_TRUE(ctx) << ctx.error().message;
  auto buf = Buffer::allocate(*dev, 64);
  ASSERT_TRUE(buf) << buf.error().message;
  EXPECT_EQ(kernel->calls(DRM_IOCTL_NPU_CTX_CREATE), 6u);
  EXPECT_EQ(kernel->calls(DRM_IOCTL_NPU_BO_CREATE), 3u);
}

TEST(MockKernel, StrictMockScriptsEverything) {
  auto kernel = std::make_shared<testing::MockKernel>();
  EXPECT_CALL(*kernel, open(std::string_view("emu:"))).WillOnce([](std::string_view) {
    errno = EACCES;
    return -1;
  });
  auto dev = Device::open_with(kernel);
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error().code, EACCES);
  EXPECT_THAT(dev.error().message, HasSubstr("open: device emu:: Permission denied"));
}

TEST(MockKernel, FailedParamReadClosesTheFile) {
  auto kernel = std::make_shared<NiceMock<testing::FakeNpuKernel>>();
  kernel->fail_next(DRM_IOCTL_NPU_GET_PARAM, EIO);
  EXPECT_CALL(*kernel, close(_)).Times(1);
  auto dev = Device::open_with(kernel);
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error().code, EIO);
  EXPECT_THAT(dev.error().message, HasSubstr("GET_PARAM failed: Input/output error (param 0)"));
}

}  // namespace
}  // namespace npu
