// Driver: the device-wide state the ioctl handlers share (Kmd::Impl owns it), and the
// handlers themselves. A handler gets the driver, the calling file and the kernel copy of
// its argument struct; it returns 0 or a negative errno, as a kernel ioctl function does.
// The dispatcher (kmd.cpp) has already copied the argument in and copies it out afterwards.
#pragma once

#include <memory>

#include "file.h"
#include "npu/emu/device.h"
#include "npu/isa/device_config.h"
#include "scheduler.h"

namespace npu::emu::kmd {

struct Driver {
  explicit Driver(isa::DeviceConfig c)
      : cfg(std::move(c)),
        device(std::make_unique<Device>(cfg)),
        scheduler(std::make_unique<Scheduler>(*device, cfg.watchdog_ms)) {}

  isa::DeviceConfig cfg;
  std::unique_ptr<Device> device;
  std::unique_ptr<Scheduler> scheduler;  // declared after device: stopped before it
};

using IoctlHandler = int (*)(Driver& drv, File& file, void* data);

int ioctl_get_param(Driver& drv, File& file, void* data);
int ioctl_query(Driver& drv, File& file, void* data);
int ioctl_bo_create(Driver& drv, File& file, void* data);
int ioctl_bo_info(Driver& drv, File& file, void* data);
int ioctl_bo_close(Driver& drv, File& file, void* data);
int ioctl_ctx_create(Driver& drv, File& file, void* data);
int ioctl_ctx_destroy(Driver& drv, File& file, void* data);
int ioctl_submit(Driver& drv, File& file, void* data);
int ioctl_wait(Driver& drv, File& file, void* data);

/// DRM_NPU_CAP_* of a device with this config.
uint64_t device_capabilities(const isa::DeviceConfig& cfg);

}  // namespace npu::emu::kmd
