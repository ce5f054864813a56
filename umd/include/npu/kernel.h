// KernelInterface: the one seam between libnpu and the kernel driver.
//
// Semantics: the five calls have exactly the shape and contract of the POSIX calls they stand
// for (open(2), close(2), ioctl(2), mmap(2), munmap(2)): they return -1 (MAP_FAILED for mmap)
// and set errno on failure. libnpu reaches the device through nothing else, so any backend —
// the in-process emulator, a real /dev/accel node, a daemon over a UNIX socket, a gmock mock
// (npu/testing/mock_kernel.h) — can sit below it without libnpu knowing which.
//
// Backend selection happens in ONE place, open_kernel(): the device string's scheme (the text
// before the first ':') picks a registered factory; "drm:[NODE]" (or a path starting with
// '/') opens a real device node (npu/drm_kernel.h). "emu:" is the default device string, but libnpu
// does not contain the emulator: its backend registers the "emu" scheme when the program links the
// CMake target npu::emu (npu/emu/backend.h); without it, opening "emu:" fails with an error saying
// what to link. The device string comes from an explicit argument, else the NPU_DEVICE environment
// variable, else "emu:". When ioctl tracing is on
// (NPU_TRACE_IOCTL=1 or set_ioctl_tracing(true)) the kernel is wrapped in a TracingKernel.
//
// Threading: implementations must accept calls from any thread (as the real calls do). The
// backend registry is guarded by a mutex.
// Lifetime: kernels are shared (std::shared_ptr); every libnpu object that issues calls keeps
// its kernel alive, so a kernel outlives every fd it handed out.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "npu/expected.h"

namespace npu {

class KernelInterface {
 public:
  virtual ~KernelInterface() = default;

  /// Opens the device node `path`; returns a file descriptor or -1 with errno.
  virtual int open(std::string_view path) = 0;
  /// Closes a descriptor from open(); 0 or -1 with errno.
  virtual int close(int fd) = 0;
  /// DRM-style ioctl on `fd`; 0 or -1 with errno. `arg` is read and written in place.
  virtual int ioctl(int fd, unsigned long request, void* arg) = 0;
  /// Maps a BO by the mmap offset BO_INFO reported; MAP_FAILED with errno on error.
  virtual void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) = 0;
  /// Unmaps a mapping from mmap(); 0 or -1 with errno.
  virtual int munmap(void* addr, size_t length) = 0;
};

/// Builds a kernel for a device string of its scheme (e.g. "emu:/path/config.json").
using KernelFactory =
    std::function<Expected<std::shared_ptr<KernelInterface>>(std::string_view device)>;

/// Registers the factory of a device-string scheme ("emu", "daemon", ...). EEXIST when the
/// scheme is taken. Built in: "drm" (DrmKernel, a device node, npu/drm_kernel.h; also "file"
/// and any path starting with '/') and "unix" (UnixKernel: a device served by npu-daemon,
/// npu/unix_kernel.h). The
/// emulator registers "emu" itself (npu::emu::register_backend, linked with npu::emu).
Expected<void> register_kernel_backend(std::string scheme, KernelFactory factory);

/// The device string used when none is given: $NPU_DEVICE, else "emu:".
std::string default_device();

/// Creates the kernel for `device` (empty: default_device()), wrapped in a TracingKernel when
/// ioctl tracing is enabled. ENODEV for an unknown scheme (for "emu" when the emulator
/// backend is not linked in); the factory's error otherwise.
Expected<std::shared_ptr<KernelInterface>> open_kernel(std::string_view device = {});

/// Turns ioctl tracing of kernels made by open_kernel() on or off, overriding
/// NPU_TRACE_IOCTL. Kernels already made keep their setting.
void set_ioctl_tracing(bool enabled);
/// Whether open_kernel() wraps new kernels in a TracingKernel.
bool ioctl_tracing_enabled();

/// "SUBMIT" for DRM_IOCTL_NPU_SUBMIT, ...; "UNKNOWN" for other requests.
const char* ioctl_name(unsigned long request);

}  // namespace npu
