// Device: one open file on an NPU device, and what the device says about itself.
//
// Semantics: Device::open() picks the kernel backend from the device string (see
// npu/kernel.h: explicit argument, else $NPU_DEVICE, else "emu:"), opens the device node and
// reads every parameter once (GET_PARAM and QUERY DEVICE_INFO), so params() never fails.
// Device::open_with() does the same on an injected KernelInterface (tests pass a
// npu::testing::FakeNpuKernel). The query helpers issue QUERY ioctls each time they are
// called. config() is the isa::DeviceConfig rebuilt from the reported parameters, against
// which CommandBuffer::finalize() validates.
//
// Errors: every fallible call returns npu::Expected; messages name the operation, the object
// and the ioctl with its errno, e.g. "query counters: fd 5: QUERY failed: Invalid argument".
// ioctls interrupted by a signal (EINTR) are retried in one place inside libnpu.
//
// Threading: a Device may be used from several threads at once; it holds no mutable state
// after open().
// Lifetime: Device is a cheap, copyable handle to shared state (the kernel and the fd).
// Buffers, Contexts and Jobs keep that state alive, so the file stays open until the last
// Device handle and the last object created from it are gone, in any order; none of them
// dangles when the Device handle is destroyed first.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "npu/expected.h"
#include "npu/isa/device_config.h"
#include "npu/kernel.h"
#include "npu_accel.h"

namespace npu {

namespace detail {
struct DeviceState;
}

class Buffer;
struct BufferOptions;

/// The device's address-space range for BOs (DRM_NPU_PARAM_VA_*).
struct VaRange {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t align = 0;
};

/// Preemption at safe points (API 1.4, DRM_NPU_CAP_PREEMPTION).
struct Preemption {
  uint64_t switch_cycles = 0;      // DRM_NPU_PARAM_PREEMPT_CYCLES: one switch's cost
  uint64_t time_slice_cycles = 0;  // DRM_NPU_PARAM_TIME_SLICE_CYCLES (0: no time slicing)
};

/// Everything GET_PARAM and DEVICE_INFO report, read once at open.
struct DeviceParams {
  std::string name;  // model name from DEVICE_INFO
  uint32_t device_id = 0;
  uint32_t revision = 0;
  uint32_t platform = 0;  // DRM_NPU_PLATFORM_*
  uint16_t api_major = 0, api_minor = 0;
  uint16_t isa_major = 0, isa_minor = 0;
  uint64_t sram_size = 0;
  uint32_t sram_banks = 0;
  uint32_t num_engines = 0;
  uint64_t engine_mask = 0;
  uint64_t clock_hz = 0;
  uint64_t capabilities = 0;  // DRM_NPU_CAP_*
  uint32_t num_semaphores = 0;
  uint32_t watchdog_ms = 0;
  uint64_t max_bo_size = 0;
  uint64_t features = 0;  // NPU_FEATURE_*
  /// Absent when the kernel predates the VA-range parameters (GET_PARAM answers EINVAL).
  std::optional<VaRange> va_range;
  /// Present when the device preempts jobs at safe points (API 1.4).
  std::optional<Preemption> preemption;

  bool has(uint64_t cap) const { return (capabilities & cap) == cap; }
};

/// One engine of QUERY ENGINE_INFO.
struct EngineInfo {
  uint32_t id = 0;  // NPU_ENGINE_*
  std::string name;
  uint32_t queue_depth = 0;
  uint64_t throughput = 0;
  uint64_t latency = 0;
};

class Device {
 public:
  /// Opens `device` (empty: default_device()). Errors name the device string.
  static Expected<Device> open(std::string_view device = {});
  /// Opens the node `path` on an injected kernel (tests, custom backends).
  static Expected<Device> open_with(std::shared_ptr<KernelInterface> kernel,
                                    std::string_view path = "emu:");

  const DeviceParams& params() const;
  /// The validation config rebuilt from params() and the engine info.
  const isa::DeviceConfig& config() const;
  /// The device string or node path this Device was opened on.
  const std::string& path() const;
  int fd() const;
  KernelInterface& kernel() const;

  /// One GET_PARAM, uncached.
  Expected<uint64_t> get_param(uint32_t param) const;
  /// A Buffer of this device for the descriptor another Buffer::export_fd() made (BO_IMPORT,
  /// API 1.3), placed as `options` say (device_read_only, fixed_va). EEXIST when the BO is
  /// already a Buffer of this device (its own export); EINVAL for a descriptor that is no
  /// exported BO of this device, EBADF for one that is not open.
  Expected<Buffer> import_buffer(int fd, const BufferOptions& options) const;
  Expected<Buffer> import_buffer(int fd) const;
  Expected<drm_npu_device_info> device_info() const;
  Expected<std::vector<EngineInfo>> engine_info() const;
  /// Device-lifetime counters (QUERY COUNTERS).
  Expected<drm_npu_counters> counters() const;
  /// This file's use of its limits: BO memory, contexts, jobs in flight, the device's BO memory
  /// (QUERY QUOTA, API 1.4 with DRM_NPU_CAP_QUOTAS).
  Expected<drm_npu_quota> quota() const;
  /// QUERY CONTEXT_STATE of a context of this file (Context::state() is the usual way).
  Expected<drm_npu_context_state> context_state(uint32_t ctx_id) const;

  /// Shared state, for the other libnpu objects.
  const std::shared_ptr<detail::DeviceState>& state() const { return state_; }

 private:
  friend class Context;
  explicit Device(std::shared_ptr<detail::DeviceState> state) : state_(std::move(state)) {}
  std::shared_ptr<detail::DeviceState> state_;
};

}  // namespace npu
