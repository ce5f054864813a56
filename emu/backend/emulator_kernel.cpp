// EmulatorKernel: forwards the seam's calls to an in-process emu::Kmd.
#include "npu/emu/emulator_kernel.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

#include "npu/emu/kmd.h"

namespace npu::emu {

EmulatorKernel::EmulatorKernel(isa::DeviceConfig config)
    : kmd_(std::make_unique<Kmd>(std::move(config))) {}

EmulatorKernel::~EmulatorKernel() = default;

Expected<isa::DeviceConfig> emu_device_config(std::string_view device) {
  std::string_view rest;
  if (device == "emu") {
    rest = {};
  } else if (device.starts_with("emu:")) {
    rest = device.substr(4);
  } else {
    return make_error(EINVAL,
                      fmt::format("open: device '{}': not an emulator device string ('emu:' or "
                                  "'emu:/path/to/device-config.json')",
                                  device));
  }
  isa::DeviceConfig cfg;
  if (!rest.empty()) {
    auto loaded = isa::DeviceConfig::load(std::string(rest));
    if (!loaded) {
      return make_error(loaded.error().code,
                        fmt::format("open: device '{}': {}", device, loaded.error().message));
    }
    cfg = std::move(*loaded);
  }
  // NPU_RACECHECK=1 checks every job for hazards, as the config's "racecheck": true does.
  const char* racecheck = std::getenv("NPU_RACECHECK");  // NOLINT(concurrency-mt-unsafe)
  if (racecheck != nullptr && *racecheck != '\0' && std::string_view(racecheck) != "0") {
    cfg.racecheck = true;
  }
  // NPU_EMU_ENGINE_THREADS=1 runs every job on one host thread per engine, as the config's
  // "engine_threads": true does.
  const char* threads = std::getenv("NPU_EMU_ENGINE_THREADS");  // NOLINT(concurrency-mt-unsafe)
  if (threads != nullptr && *threads != '\0' && std::string_view(threads) != "0") {
    cfg.engine_threads = true;
  }
  return cfg;
}

Expected<std::shared_ptr<EmulatorKernel>> EmulatorKernel::create(std::string_view device) {
  auto cfg = emu_device_config(device);
  if (!cfg) return cfg.error();
  return std::make_shared<EmulatorKernel>(std::move(*cfg));
}

int EmulatorKernel::open(std::string_view /*path*/) {
  return kmd_->open();
}
int EmulatorKernel::close(int fd) {
  return kmd_->close(fd);
}
int EmulatorKernel::ioctl(int fd, unsigned long request, void* arg) {
  return kmd_->ioctl(fd, request, arg);
}
void* EmulatorKernel::mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  return kmd_->mmap(addr, length, prot, flags, fd, offset);
}
int EmulatorKernel::munmap(void* addr, size_t length) {
  return kmd_->munmap(addr, length);
}
const isa::DeviceConfig& EmulatorKernel::config() const {
  return kmd_->config();
}

}  // namespace npu::emu
