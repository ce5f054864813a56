// Driver: the device-wide state the ioctl handlers share (Kmd::Impl owns it), and the
// handlers themselves, one per row of uapi/npu_ioctls.def. A handler gets the driver, the calling
// file and the kernel copy of its argument struct; it returns 0 or a negative errno, as a kernel
// ioctl function does. The dispatcher (kmd.cpp) has already copied the argument in and copies it
// out afterwards.
#pragma once

#include <memory>

#include "file.h"
#include "npu/emu/device.h"
#include "npu/isa/device_config.h"
#include "npu_accel.h"
#include "peer_table.h"
#include "quota.h"
#include "scheduler.h"
#include "sync_fence.h"
#include "uaccess.h"

namespace npu::emu::kmd {

struct Driver {
  Driver(isa::DeviceConfig c, UserAccess access)
      : cfg(std::move(c)),
        uaccess(access),
        device(std::make_unique<Device>(cfg)),
        scheduler(std::make_unique<Scheduler>(*device, cfg)),
        limits(resolve_limits(cfg.quota)),
        memory(std::make_shared<DeviceMemory>(limits.device_bo_memory)) {}

  isa::DeviceConfig cfg;
  UserAccess uaccess;  // how handlers follow the ABI's user pointers
  // Descriptors handed to user space (API 1.3): job fences, exported BOs. Declared before the
  // scheduler, so they outlive its jobs.
  PeerTable<SyncFence> fences;
  PeerTable<BoMemory> exports;
  std::unique_ptr<Device> device;
  std::unique_ptr<Scheduler> scheduler;  // declared after device: stopped before it
  // Quotas (quota.h): the limits every file is held to, and the device's BO memory account.
  Limits limits;
  std::shared_ptr<DeviceMemory> memory;
};

using IoctlHandler = int (*)(Driver& drv, File& file, void* data);

// One handler per row of npu_ioctls.def: ioctl_<name> for the driver's ioctls (ioctl_*.cpp),
// core_<name> for the core DRM ioctls it answers (ioctl_core.cpp).
#define NPU_IOCTL(NAME, name, type) int ioctl_##name(Driver& drv, File& file, void* data);
#define NPU_CORE_IOCTL(NAME, name, type) int core_##name(Driver& drv, File& file, void* data);
#include "npu_ioctls.def"

/// DRM_NPU_CAP_* of a device with this config.
uint64_t device_capabilities(const isa::DeviceConfig& cfg);

}  // namespace npu::emu::kmd
