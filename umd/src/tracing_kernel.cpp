// TracingKernel: one log line per forwarded call, with the ioctl's key fields decoded.
#include "npu/tracing_kernel.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "npu/job.h"
#include "npu/log.h"
#include "npu_accel.h"

namespace npu {

namespace {

spdlog::logger& trace_log() {
  // Tracing is opted into (NPU_TRACE_IOCTL), so it shows unless NPU_LOG_LEVEL says otherwise.
  return npu::logger("npu.ioctl", LogLevel::kDebug);
}

const char* query_name(uint32_t type) {
  switch (type) {
    case DRM_NPU_QUERY_DEVICE_INFO:
      return "DEVICE_INFO";
    case DRM_NPU_QUERY_ENGINE_INFO:
      return "ENGINE_INFO";
    case DRM_NPU_QUERY_CONTEXT_STATE:
      return "CONTEXT_STATE";
    case DRM_NPU_QUERY_COUNTERS:
      return "COUNTERS";
    case DRM_NPU_QUERY_JOB_PROFILE:
      return "JOB_PROFILE";
    case DRM_NPU_QUERY_JOB_HAZARDS:
      return "JOB_HAZARDS";
    case DRM_NPU_QUERY_LAST_ERROR:
      return "LAST_ERROR";
    case DRM_NPU_QUERY_JOB_RACES:
      return "JOB_RACES";
    case DRM_NPU_QUERY_QUOTA:
      return "QUOTA";
    default:
      return "?";
  }
}

std::string param_name(uint32_t param) {
  static constexpr const char* kNames[DRM_NPU_PARAM_COUNT] = {
      "DEVICE_ID",    "REVISION",       "PLATFORM",    "API_VERSION",    "ISA_VERSION",
      "SRAM_SIZE",    "SRAM_BANKS",     "NUM_ENGINES", "ENGINE_MASK",    "CLOCK_HZ",
      "CAPABILITIES", "NUM_SEMAPHORES", "WATCHDOG_MS", "MAX_BO_SIZE",    "FEATURES",
      "VA_START",     "VA_END",         "VA_ALIGN",    "PREEMPT_CYCLES", "TIME_SLICE_CYCLES"};
  return param < DRM_NPU_PARAM_COUNT ? kNames[param] : std::to_string(param);
}

std::string result(int ret, int err) {
  if (ret == 0) return "0";
  const char* name = strerrorname_np(err);
  return fmt::format("-1 {} ({})", name != nullptr ? name : "?", std::strerror(err));
}

double elapsed_us(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string describe_ioctl(unsigned long request, const void* arg, bool after) {
  if (arg == nullptr) return "arg=null";
  switch (request) {
    case DRM_IOCTL_NPU_GET_PARAM: {
      const auto& a = *static_cast<const drm_npu_get_param*>(arg);
      return after ? fmt::format("value={:#x}", a.value)
                   : fmt::format("param={} index={}", param_name(a.param), a.index);
    }
    case DRM_IOCTL_NPU_QUERY: {
      const auto& a = *static_cast<const drm_npu_query*>(arg);
      return after ? fmt::format("size={}", a.size)
                   : fmt::format("type={} size={} arg0={} arg1={}", query_name(a.type), a.size,
                                 a.arg0, a.arg1);
    }
    case DRM_IOCTL_NPU_BO_CREATE: {
      const auto& a = *static_cast<const drm_npu_bo_create*>(arg);
      return after ? fmt::format("handle={} va={:#x}", a.handle, a.device_addr)
                   : fmt::format("size={} flags={:#x} va={:#x}", a.size, a.flags, a.device_addr);
    }
    case DRM_IOCTL_NPU_BO_INFO: {
      const auto& a = *static_cast<const drm_npu_bo_info*>(arg);
      return after ? fmt::format("size={} va={:#x} mmap_offset={:#x}", a.size, a.device_addr,
                                 a.mmap_offset)
                   : fmt::format("handle={}", a.handle);
    }
    case DRM_IOCTL_NPU_BO_CLOSE: {
      const auto& a = *static_cast<const drm_npu_bo_close*>(arg);
      return after ? std::string() : fmt::format("handle={}", a.handle);
    }
    case DRM_IOCTL_NPU_CTX_CREATE: {
      const auto& a = *static_cast<const drm_npu_ctx_create*>(arg);
      return after ? fmt::format("ctx={}", a.ctx_id) : fmt::format("priority={}", a.priority);
    }
    case DRM_IOCTL_NPU_CTX_DESTROY: {
      const auto& a = *static_cast<const drm_npu_ctx_destroy*>(arg);
      return after ? std::string() : fmt::format("ctx={}", a.ctx_id);
    }
    case DRM_IOCTL_NPU_SUBMIT: {
      const auto& a = *static_cast<const drm_npu_submit*>(arg);
      if (after) {
        return (a.flags & DRM_NPU_SUBMIT_FENCE_OUT) != 0
                   ? fmt::format("seqno={} fence_fd={}", a.seqno, a.fence_fd)
                   : fmt::format("seqno={}", a.seqno);
      }
      std::string s =
          fmt::format("ctx={} flags={:#x} cmd_handle={} cmd_offset={} cmd_size={} bos={}", a.ctx_id,
                      a.flags, a.cmd_handle, a.cmd_offset, a.cmd_size, a.bo_count);
      if (a.in_fence_count != 0) s += fmt::format(" in_fences={}", a.in_fence_count);
      return s;
    }
    case DRM_IOCTL_NPU_BO_EXPORT: {
      const auto& a = *static_cast<const drm_npu_bo_export*>(arg);
      return after ? fmt::format("fd={}", a.fd) : fmt::format("handle={}", a.handle);
    }
    case DRM_IOCTL_NPU_BO_IMPORT: {
      const auto& a = *static_cast<const drm_npu_bo_import*>(arg);
      return after ? fmt::format("handle={} size={} va={:#x}{}", a.handle, a.size, a.device_addr,
                                 (a.flags & DRM_NPU_BO_IMPORT_EXISTED) != 0 ? " existed" : "")
                   : fmt::format("fd={} flags={:#x}", a.fd, a.flags);
    }
    case DRM_IOCTL_NPU_CTX_EVENTS: {
      const auto& a = *static_cast<const drm_npu_ctx_events*>(arg);
      return after ? fmt::format("fd={}", a.fd) : fmt::format("ctx={}", a.ctx_id);
    }
    case DRM_IOCTL_NPU_FENCE_WAIT: {
      const auto& a = *static_cast<const drm_npu_fence_wait*>(arg);
      return after ? fmt::format("signalled={} first={} status={}", a.signalled, a.first,
                                 to_string(static_cast<JobStatus>(a.status)))
                   : fmt::format("count={} flags={:#x} timeout_ns={}", a.count, a.flags,
                                 a.timeout_ns);
    }
    case DRM_IOCTL_NPU_WAIT: {
      const auto& a = *static_cast<const drm_npu_wait*>(arg);
      if (!after) {
        return fmt::format("ctx={} seqno={} timeout_ns={}", a.ctx_id, a.seqno, a.timeout_ns);
      }
      std::string s =
          fmt::format("status={} cycles={}", to_string(static_cast<JobStatus>(a.status)), a.cycles);
      if (a.status == DRM_NPU_JOB_ERROR) {
        s += fmt::format(" fault={} engine={} cmd={} addr={:#x}", fault_kind_name(a.fault.kind),
                         a.fault.engine, a.fault.cmd_index, a.fault.address);
      }
      return s;
    }
    case DRM_IOCTL_NPU_BO_WAIT: {
      const auto& a = *static_cast<const drm_npu_bo_wait*>(arg);
      return after ? std::string() : fmt::format("handle={} timeout_ns={}", a.handle, a.timeout_ns);
    }
    case DRM_IOCTL_VERSION: {
      const auto& a = *static_cast<const drm_version*>(arg);
      return after ? fmt::format("version={}.{}.{} name_len={}", a.version_major, a.version_minor,
                                 a.version_patchlevel, a.name_len)
                   : fmt::format("name_len={} date_len={} desc_len={}", a.name_len, a.date_len,
                                 a.desc_len);
    }
    default:
      return fmt::format("request={:#x}", request);
  }
}

TracingKernel::TracingKernel(std::shared_ptr<KernelInterface> inner, Sink sink)
    : inner_(std::move(inner)), sink_(std::move(sink)) {}

void TracingKernel::emit(const std::string& line) {
  if (sink_) {
    sink_(line);
  } else {
    trace_log().debug("{}", line);
  }
}

int TracingKernel::open(std::string_view path) {
  const auto t0 = std::chrono::steady_clock::now();
  const int fd = inner_->open(path);
  const int err = errno;
  emit(fmt::format("open {} -> {} ({:.1f} us)", path,
                   fd >= 0 ? std::to_string(fd) : result(-1, err), elapsed_us(t0)));
  errno = err;
  return fd;
}

int TracingKernel::close(int fd) {
  const auto t0 = std::chrono::steady_clock::now();
  const int ret = inner_->close(fd);
  const int err = errno;
  emit(fmt::format("close fd {} -> {} ({:.1f} us)", fd, result(ret, err), elapsed_us(t0)));
  errno = err;
  return ret;
}

int TracingKernel::ioctl(int fd, unsigned long request, void* arg) {
  const bool enabled = sink_ || trace_log().should_log(spdlog::level::debug);
  if (!enabled) return inner_->ioctl(fd, request, arg);
  const std::string in = describe_ioctl(request, arg, false);
  const auto t0 = std::chrono::steady_clock::now();
  const int ret = inner_->ioctl(fd, request, arg);
  const int err = errno;
  const double us = elapsed_us(t0);
  // Outputs are meaningful on success; WAIT also reports them with ETIMEDOUT.
  const bool outputs = ret == 0 || request == DRM_IOCTL_NPU_WAIT;
  std::string out = outputs ? describe_ioctl(request, arg, true) : std::string();
  emit(fmt::format("ioctl fd {} {} {} -> {}{}{} ({:.1f} us)", fd, ioctl_name(request), in,
                   result(ret, err), out.empty() ? "" : " ", out, us));
  errno = err;
  return ret;
}

void* TracingKernel::mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  const auto t0 = std::chrono::steady_clock::now();
  void* p = inner_->mmap(addr, length, prot, flags, fd, offset);
  const int err = errno;
  emit(fmt::format("mmap fd {} len={} offset={:#x} -> {} ({:.1f} us)", fd, length, offset,
                   p == MAP_FAILED ? result(-1, err) : fmt::format("{}", p), elapsed_us(t0)));
  errno = err;
  return p;
}

int TracingKernel::munmap(void* addr, size_t length) {
  const auto t0 = std::chrono::steady_clock::now();
  const int ret = inner_->munmap(addr, length);
  const int err = errno;
  emit(fmt::format("munmap {} len={} -> {} ({:.1f} us)", addr, length, result(ret, err),
                   elapsed_us(t0)));
  errno = err;
  return ret;
}

}  // namespace npu
