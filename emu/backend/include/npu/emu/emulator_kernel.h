// EmulatorKernel: the in-process emulator (emu::Kmd, the mock kernel driver with its threaded
// device model) behind libnpu's KernelInterface seam — the backend of "emu:" device strings.
//
// Semantics: one EmulatorKernel is one emulated device. open() returns a new file on it
// whatever the path, so several Devices opened on the same EmulatorKernel share the device
// (its SRAM, scheduler and counters) as processes share a real device node, while each
// open_kernel("emu:") call creates a fresh device. Device strings: "emu:" (default device
// config) or "emu:/path/to/device-config.json" (docs/device-config.md); create() also reads
// NPU_RACECHECK=1 (every job under the synchronization checker, docs/racecheck.md). libnpu
// does not link
// the emulator: linking the CMake target npu::emu (or npu::emu_backend) registers the "emu"
// scheme in libnpu's backend registry (npu/emu/backend.h).
//
// Threading: every call may come from any thread (emu::Kmd is thread-safe).
// Lifetime: the device and its threads live as long as the EmulatorKernel; destroying it
// closes the files left open.
#pragma once

#include <memory>
#include <string_view>

#include "npu/expected.h"
#include "npu/isa/device_config.h"
#include "npu/kernel.h"

namespace npu::emu {

class Kmd;

/// The device config an "emu:[config path]" device string names, with the environment's
/// overrides applied (NPU_RACECHECK=1, NPU_EMU_ENGINE_THREADS=1). EINVAL for another scheme,
/// the config loader's error (naming the file) for a bad config.
Expected<isa::DeviceConfig> emu_device_config(std::string_view device);

class EmulatorKernel final : public KernelInterface {
 public:
  explicit EmulatorKernel(isa::DeviceConfig config = {});
  ~EmulatorKernel() override;
  EmulatorKernel(const EmulatorKernel&) = delete;
  EmulatorKernel& operator=(const EmulatorKernel&) = delete;

  /// Parses an "emu:[config path]" device string and builds the device. EINVAL for another
  /// scheme, the config loader's error (naming the file) for a bad config.
  static Expected<std::shared_ptr<EmulatorKernel>> create(std::string_view device);

  int open(std::string_view path) override;
  int close(int fd) override;
  int ioctl(int fd, unsigned long request, void* arg) override;
  void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override;
  int munmap(void* addr, size_t length) override;

  /// The emulated device's configuration.
  const isa::DeviceConfig& config() const;

 private:
  std::unique_ptr<Kmd> kmd_;
};

}  // namespace npu::emu
