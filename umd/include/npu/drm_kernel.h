// DrmKernel: libnpu on a device node — the backend of "drm:" device strings, what libnpu does
// on a real kernel driver implementing uapi/npu_accel.h (and on the emulated node the preload
// shim provides, npu-shim).
//
// Semantics: open() opens the node with plain open(2) (O_RDWR | O_CLOEXEC) and asks its
// driver's name with libdrm's drmGetVersion(): a node whose driver is not DRM_NPU_DRIVER_NAME
// is closed again (ENODEV, logged with the name found). ioctl() is libdrm's drmIoctl(), which
// restarts on EINTR and EAGAIN; mmap()/munmap() are the system calls. Device strings:
// "drm:/dev/accel/accelN" (that node), "drm:" (the first accel node whose driver is ours, in
// number order), and — as before the scheme existed — a bare path "/dev/accel/accelN" or
// "file:/dev/accel/accelN".
//
// Threading: every call may come from any thread (they are system calls). Lifetime: holds no
// state; descriptors belong to their callers.
#pragma once

#include <string>
#include <string_view>

#include "npu/expected.h"
#include "npu/kernel.h"

namespace npu {

class DrmKernel final : public KernelInterface {
 public:
  /// The node a device string names: "drm:" alone finds the first accel node with our
  /// driver. ENODEV (naming what was looked at) when there is none; EINVAL for a string
  /// that is not a drm:/file: one or a path.
  static Expected<std::string> resolve(std::string_view device);
  /// Checks that the driver behind the open descriptor `fd` is ours (drmGetVersion): its
  /// name and API version, or ENODEV/EPROTO with what was found.
  static Expected<void> check_driver(int fd, std::string_view path);

  /// Opens `path` (a node path or a device string resolve() takes) and checks its driver.
  int open(std::string_view path) override;
  int close(int fd) override;
  int ioctl(int fd, unsigned long request, void* arg) override;
  void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) override;
  int munmap(void* addr, size_t length) override;
};

/// The name this backend had before "drm:" existed.
using SystemKernel = DrmKernel;

}  // namespace npu
