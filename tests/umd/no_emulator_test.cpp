// libnpu linked without the emulator backend (no npu::emu): the "emu" scheme is not
// registered, so opening "emu:" — also as the default device — fails with one line naming the
// CMake target to link, and other schemes still work as before.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "npu/device.h"
#include "npu/kernel.h"

namespace npu {
namespace {

constexpr const char* kNotLinked =
    "open: device 'emu:': the emulator backend is not linked in (link the CMake target "
    "npu::emu)";

TEST(NoEmulator, EmuSchemeNamesWhatToLink) {
  auto dev = Device::open("emu:");
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error().code, ENODEV);
  EXPECT_EQ(dev.error().message, kNotLinked);
}

TEST(NoEmulator, DefaultDeviceNamesWhatToLink) {
  unsetenv("NPU_DEVICE");
  auto dev = Device::open();
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error().message, kNotLinked);
}

TEST(NoEmulator, OtherSchemesAreUnchanged) {
  auto none = open_kernel("nosuch:thing");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, ENODEV);
  EXPECT_NE(none.error().message.find("no backend for scheme 'nosuch'"), std::string::npos);
  auto node = Device::open("/nonexistent/accel0");
  ASSERT_FALSE(node);
  EXPECT_EQ(node.error().code, ENOENT);
}

}  // namespace
}  // namespace npu
