// Device: open, the parameters read once at open, and the QUERY helpers. Also DeviceState's
// do_ioctl(), the single choke point of every ioctl libnpu issues.
#include "npu/device.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "npu/drm_kernel.h"
#include "npu/log.h"
#include "state.h"

namespace npu {
namespace detail {

spdlog::logger& log() {
  return npu::logger("npu");
}

Error ioctl_error(std::string_view who, unsigned long request, int err, std::string_view detail) {
  std::string msg = fmt::format("{}: {} failed: {}", who, ioctl_name(request), std::strerror(err));
  if (!detail.empty()) msg += fmt::format(" ({})", detail);
  return make_error(err, std::move(msg));
}

DeviceState::~DeviceState() {
  if (fd >= 0 && kernel->close(fd) != 0) {
    log().warn("close: device {}: fd {}: {}", path, fd, std::strerror(errno));
  }
}

int DeviceState::do_ioctl(unsigned long request, void* arg) const {
  for (;;) {
    if (kernel->ioctl(fd, request, arg) == 0) return 0;
    const int err = errno;
    if (err != EINTR) return err;
  }
}

Expected<void> DeviceState::ioctl(unsigned long request, void* arg, std::string_view who) const {
  if (const int err = do_ioctl(request, arg); err != 0) {
    // A quota (EDQUOT) or the priority policy (EPERM, API 1.4): the kernel names the limit.
    const std::string why = err == EDQUOT || err == EPERM ? last_kernel_error() : std::string();
    return ioctl_error(who, request, err, why);
  }
  return ok();
}

std::string DeviceState::last_kernel_error() const {
  drm_npu_query q{};
  q.type = DRM_NPU_QUERY_LAST_ERROR;
  if (do_ioctl(DRM_IOCTL_NPU_QUERY, &q) != 0 || q.size <= 1) return {};
  std::string text(q.size, '\0');
  q.data = reinterpret_cast<uintptr_t>(text.data());
  if (do_ioctl(DRM_IOCTL_NPU_QUERY, &q) != 0) return {};
  text.resize(std::min<size_t>(q.size, text.size()));
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

}  // namespace detail

namespace {

template <typename T>
Expected<size_t> query(const detail::DeviceState& s, uint32_t type, uint64_t arg0, T* out,
                       size_t size, std::string_view who) {
  drm_npu_query q{};
  q.type = type;
  q.size = static_cast<uint32_t>(size);
  q.arg0 = arg0;
  q.data = reinterpret_cast<uintptr_t>(out);
  NPU_TRY(s.ioctl(DRM_IOCTL_NPU_QUERY, &q, who));
  return size_t{q.size};
}

Expected<void> read_params(detail::DeviceState& s) {
  const std::string who = fmt::format("open: device {}: fd {}", s.path, s.fd);
  DeviceParams& p = s.params;
  auto get = [&](uint32_t param, auto& field) -> Expected<void> {
    drm_npu_get_param g{};
    g.param = param;
    if (const int err = s.do_ioctl(DRM_IOCTL_NPU_GET_PARAM, &g); err != 0) {
      return detail::ioctl_error(who, DRM_IOCTL_NPU_GET_PARAM, err, fmt::format("param {}", param));
    }
    field = static_cast<std::remove_reference_t<decltype(field)>>(g.value);
    return ok();
  };
  uint32_t api = 0, isa = 0;
  NPU_TRY(get(DRM_NPU_PARAM_DEVICE_ID, p.device_id));
  NPU_TRY(get(DRM_NPU_PARAM_REVISION, p.revision));
  NPU_TRY(get(DRM_NPU_PARAM_PLATFORM, p.platform));
  NPU_TRY(get(DRM_NPU_PARAM_API_VERSION, api));
  NPU_TRY(get(DRM_NPU_PARAM_ISA_VERSION, isa));
  NPU_TRY(get(DRM_NPU_PARAM_SRAM_SIZE, p.sram_size));
  NPU_TRY(get(DRM_NPU_PARAM_SRAM_BANKS, p.sram_banks));
  NPU_TRY(get(DRM_NPU_PARAM_NUM_ENGINES, p.num_engines));
  NPU_TRY(get(DRM_NPU_PARAM_ENGINE_MASK, p.engine_mask));
  NPU_TRY(get(DRM_NPU_PARAM_CLOCK_HZ, p.clock_hz));
  NPU_TRY(get(DRM_NPU_PARAM_CAPABILITIES, p.capabilities));
  NPU_TRY(get(DRM_NPU_PARAM_NUM_SEMAPHORES, p.num_semaphores));
  NPU_TRY(get(DRM_NPU_PARAM_WATCHDOG_MS, p.watchdog_ms));
  NPU_TRY(get(DRM_NPU_PARAM_MAX_BO_SIZE, p.max_bo_size));
  NPU_TRY(get(DRM_NPU_PARAM_FEATURES, p.features));
  p.api_major = static_cast<uint16_t>(api >> 16);
  p.api_minor = static_cast<uint16_t>(api & 0xffff);
  p.isa_major = static_cast<uint16_t>(isa >> 16);
  p.isa_minor = static_cast<uint16_t>(isa & 0xffff);
  if (p.api_major != DRM_NPU_API_VERSION_MAJOR) {
    return make_error(EPROTO, fmt::format("{}: kernel api version {}.{}, libnpu speaks {}.x", who,
                                          p.api_major, p.api_minor, DRM_NPU_API_VERSION_MAJOR));
  }

  // The VA-range parameters came with API 1.0's FIXED_VA; older kernels answer EINVAL.
  VaRange va;
  if (get(DRM_NPU_PARAM_VA_START, va.start) && get(DRM_NPU_PARAM_VA_END, va.end) &&
      get(DRM_NPU_PARAM_VA_ALIGN, va.align)) {
    p.va_range = va;
  }

  // Preemption (API 1.4): the switch's cost and the time slice.
  if (p.has(DRM_NPU_CAP_PREEMPTION)) {
    uint64_t cycles = 0, slice = 0;
    if (get(DRM_NPU_PARAM_PREEMPT_CYCLES, cycles) && get(DRM_NPU_PARAM_TIME_SLICE_CYCLES, slice)) {
      p.preemption = Preemption{cycles, slice};
    }
  }

  drm_npu_device_info info{};
  NPU_TRY(query(s, DRM_NPU_QUERY_DEVICE_INFO, 0, &info, sizeof(info), who));
  p.name.assign(info.name, strnlen(info.name, sizeof(info.name)));
  return ok();
}

}  // namespace

Expected<Device> Device::open(std::string_view device) {
  const std::string dev = device.empty() ? default_device() : std::string(device);
  auto kernel = open_kernel(dev);
  if (!kernel) return kernel.error();
  // A node ("drm:", "drm:/dev/accel/accelN", "file:PATH", a path) is opened by its path, so
  // messages name it; other schemes get the whole string.
  std::string path = dev;
  if (dev.starts_with("drm:") || dev.starts_with("file:") || dev.starts_with('/')) {
    auto node = DrmKernel::resolve(dev);
    if (!node) return node.error();
    path = std::move(*node);
  }
  return open_with(std::move(*kernel), path);
}

Expected<Device> Device::open_with(std::shared_ptr<KernelInterface> kernel, std::string_view path) {
  if (kernel == nullptr) return make_error(EINVAL, fmt::format("open: device {}: no kernel", path));
  const int fd = kernel->open(path);
  if (fd < 0) {
    const int err = errno;
    return make_error(err, fmt::format("open: device {}: {}", path, std::strerror(err)));
  }
  auto state = std::make_shared<detail::DeviceState>(std::move(kernel), fd, std::string(path));
  NPU_TRY(read_params(*state));
  Device d(state);
  auto engines = d.engine_info();
  if (!engines) return engines.error();

  // The validation config: what the device reports, defaults for what it does not.
  isa::DeviceConfig& c = state->config;
  const DeviceParams& p = state->params;
  c.name = p.name;
  c.device_id = p.device_id;
  c.revision = p.revision;
  c.clock_hz = p.clock_hz;
  c.sram_size = p.sram_size;
  c.sram_banks = p.sram_banks;
  c.num_semaphores = p.num_semaphores;
  c.watchdog_ms = p.watchdog_ms;
  c.features = p.features;
  c.max_bo_size = p.max_bo_size;
  for (const EngineInfo& e : *engines) {
    c.queue_depth = e.queue_depth;
    if (e.id == NPU_ENGINE_DMA_IN) {
      c.dma.bytes_per_cycle = static_cast<uint32_t>(e.throughput);
      c.dma.latency = static_cast<uint32_t>(e.latency);
    } else if (e.id == NPU_ENGINE_MATRIX) {
      c.matrix.fill_latency = static_cast<uint32_t>(e.latency);
    } else if (e.id == NPU_ENGINE_VECTOR) {
      c.vector.latency = static_cast<uint32_t>(e.latency);
    } else if (e.id == NPU_ENGINE_CP) {
      c.cp_cycles_per_cmd = static_cast<uint32_t>(e.latency);
    }
  }
  return d;
}

const DeviceParams& Device::params() const {
  return state_->params;
}
const isa::DeviceConfig& Device::config() const {
  return state_->config;
}
const std::string& Device::path() const {
  return state_->path;
}
int Device::fd() const {
  return state_->fd;
}
KernelInterface& Device::kernel() const {
  return *state_->kernel;
}

Expected<uint64_t> Device::get_param(uint32_t param) const {
  drm_npu_get_param g{};
  g.param = param;
  if (const int err = state_->do_ioctl(DRM_IOCTL_NPU_GET_PARAM, &g); err != 0) {
    return detail::ioctl_error(fmt::format("get param: fd {}", state_->fd), DRM_IOCTL_NPU_GET_PARAM,
                               err, fmt::format("param {}", param));
  }
  return uint64_t{g.value};
}

Expected<drm_npu_device_info> Device::device_info() const {
  drm_npu_device_info info{};
  auto r = query(*state_, DRM_NPU_QUERY_DEVICE_INFO, 0, &info, sizeof(info),
                 fmt::format("query device info: fd {}", state_->fd));
  if (!r) return r.error();
  return info;
}

Expected<std::vector<EngineInfo>> Device::engine_info() const {
  const std::string who = fmt::format("query engine info: fd {}", state_->fd);
  auto size = query<drm_npu_engine_info>(*state_, DRM_NPU_QUERY_ENGINE_INFO, 0, nullptr, 0, who);
  if (!size) return size.error();
  std::vector<drm_npu_engine_info> raw(*size / sizeof(drm_npu_engine_info));
  auto got = query(*state_, DRM_NPU_QUERY_ENGINE_INFO, 0, raw.data(),
                   raw.size() * sizeof(drm_npu_engine_info), who);
  if (!got) return got.error();
  std::vector<EngineInfo> out;
  for (const drm_npu_engine_info& e : raw) {
    out.push_back({e.id, std::string(e.name, strnlen(e.name, sizeof(e.name))), e.queue_depth,
                   e.throughput, e.latency});
  }
  return out;
}

Expected<drm_npu_counters> Device::counters() const {
  drm_npu_counters c{};
  auto r = query(*state_, DRM_NPU_QUERY_COUNTERS, 0, &c, sizeof(c),
                 fmt::format("query counters: fd {}", state_->fd));
  if (!r) return r.error();
  return c;
}

Expected<drm_npu_quota> Device::quota() const {
  drm_npu_quota q{};
  auto r = query(*state_, DRM_NPU_QUERY_QUOTA, 0, &q, sizeof(q),
                 fmt::format("query quota: fd {}", state_->fd));
  if (!r) return r.error();
  return q;
}

Expected<drm_npu_context_state> Device::context_state(uint32_t ctx_id) const {
  drm_npu_context_state s{};
  auto r = query(*state_, DRM_NPU_QUERY_CONTEXT_STATE, ctx_id, &s, sizeof(s),
                 fmt::format("query context state: ctx {}", ctx_id));
  if (!r) return r.error();
  return s;
}

}  // namespace npu
