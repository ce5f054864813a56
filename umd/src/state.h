// Private shared state behind the public handles: the open file (DeviceState), a kernel
// context (ContextHandle) and a job's cached result (JobCache). The public objects hold these
// through shared_ptr, which gives the lifetime rules documented in device.h and context.h.
#pragma once

#include <spdlog/spdlog.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "npu/context.h"
#include "npu/device.h"
#include "npu/expected.h"
#include "npu/job.h"
#include "npu/kernel.h"

namespace npu::detail {

/// libnpu's logger ("npu"): destructor-time errors that cannot be returned.
spdlog::logger& log();

/// "who: NAME failed: strerror" plus " (detail)" when given.
Error ioctl_error(std::string_view who, unsigned long request, int err,
                  std::string_view detail = {});

struct DeviceState {
  DeviceState(std::shared_ptr<KernelInterface> k, int f, std::string p)
      : kernel(std::move(k)), fd(f), path(std::move(p)) {}
  ~DeviceState();
  DeviceState(const DeviceState&) = delete;
  DeviceState& operator=(const DeviceState&) = delete;

  /// The one place libnpu issues an ioctl: retries while interrupted (EINTR) and returns
  /// 0 or the errno.
  int do_ioctl(unsigned long request, void* arg) const;
  /// do_ioctl() with the error message convention.
  Expected<void> ioctl(unsigned long request, void* arg, std::string_view who) const;
  /// The kernel's reason for this file's last rejected SUBMIT/BO_CREATE (QUERY LAST_ERROR,
  /// API 1.2), or "" when it has none or cannot say (an older kernel).
  std::string last_kernel_error() const;

  std::shared_ptr<KernelInterface> kernel;
  int fd = -1;
  std::string path;
  DeviceParams params;
  isa::DeviceConfig config;
};

struct ContextHandle {
  ContextHandle(std::shared_ptr<DeviceState> d, uint32_t i, Priority p)
      : dev(std::move(d)), id(i), priority(p) {}
  ~ContextHandle();  // CTX_DESTROY
  ContextHandle(const ContextHandle&) = delete;
  ContextHandle& operator=(const ContextHandle&) = delete;

  std::shared_ptr<DeviceState> dev;
  uint32_t id;
  Priority priority;
};

struct JobCache {
  std::mutex mu;
  std::optional<JobResult> result;
};

}  // namespace npu::detail
