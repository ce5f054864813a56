// QUERY: size-negotiated reads of device info, engine info, context state, device counters,
// job profiles, the hazards the synchronization checker found in a job, and the file's quota. Every
// type builds its full answer, then the common tail copies as much as the caller has room for and
// reports the full size.
#include <algorithm>
#include <cstring>
#include <vector>

#include "driver.h"
#include "log.h"
#include "npu/isa/validate.h"
#include "npu_isa.h"
#include "uaccess.h"

namespace npu::emu::kmd {
namespace {

template <typename T>
void put(std::vector<std::byte>& out, const T& v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

drm_npu_device_info device_info(const isa::DeviceConfig& cfg) {
  drm_npu_device_info d{};
  d.device_id = cfg.device_id;
  d.revision = cfg.revision;
  d.platform = DRM_NPU_PLATFORM_EMULATOR;
  d.api_version = (DRM_NPU_API_VERSION_MAJOR << 16) | DRM_NPU_API_VERSION_MINOR;
  d.isa_version = (NPU_ISA_VERSION_MAJOR << 16) | NPU_ISA_VERSION_MINOR;
  d.num_engines = NPU_NUM_ENGINES;
  d.sram_size = cfg.sram_size;
  d.sram_banks = cfg.sram_banks;
  d.num_semaphores = cfg.num_semaphores;
  d.clock_hz = cfg.clock_hz;
  d.capabilities = device_capabilities(cfg);
  d.features = cfg.features;
  d.watchdog_ms = cfg.watchdog_ms;
  std::strncpy(d.name, cfg.name.c_str(), sizeof(d.name) - 1);
  return d;
}

drm_npu_engine_info engine(uint32_t id, uint32_t depth, uint64_t throughput, uint64_t latency) {
  drm_npu_engine_info e{};
  e.id = id;
  e.queue_depth = depth;
  e.throughput = throughput;
  e.latency = latency;
  std::strncpy(e.name, isa::engine_name(static_cast<uint8_t>(id)), sizeof(e.name) - 1);
  return e;
}

void engine_info(const isa::DeviceConfig& cfg, std::vector<std::byte>& out) {
  const uint32_t q = cfg.queue_depth;
  // The CP dispatches one command per cp_cycles_per_cmd cycles: reported as throughput 1
  // with that latency. Matrix and vector report their int8 peak when the device has int8.
  const bool int8 = (cfg.features & NPU_FEATURE_INT8) != 0;
  const uint64_t macs = int8 ? uint64_t{cfg.matrix.int8_rows} * cfg.matrix.int8_cols
                             : uint64_t{cfg.matrix.fp32_rows} * cfg.matrix.fp32_cols;
  const uint64_t lanes = int8 ? cfg.vector.int8_lanes : cfg.vector.fp32_lanes;
  put(out, engine(NPU_ENGINE_CP, q, 1, cfg.cp_cycles_per_cmd));
  put(out, engine(NPU_ENGINE_DMA_IN, q, cfg.dma.bytes_per_cycle, cfg.dma.latency));
  put(out, engine(NPU_ENGINE_DMA_OUT, q, cfg.dma.bytes_per_cycle, cfg.dma.latency));
  put(out, engine(NPU_ENGINE_MATRIX, q, macs, cfg.matrix.fill_latency));
  put(out, engine(NPU_ENGINE_VECTOR, q, lanes, cfg.vector.latency));
}

drm_npu_quota quota(const Driver& drv, File& file) {
  drm_npu_quota q{};
  std::lock_guard lk(file.mu);
  const File::Usage u = file.usage_locked();
  const Limits& l = file.policy().limits;
  q.bo_memory = u.bo_bytes;
  q.bo_memory_limit = l.bo_memory;
  q.device_bo_memory = drv.memory->used();
  q.device_bo_memory_limit = drv.memory->limit();
  q.contexts = u.contexts;
  q.contexts_limit = std::min<uint32_t>(l.contexts, File::kMaxContexts);
  q.jobs_in_flight = u.jobs_in_flight;
  q.jobs_in_flight_limit = l.jobs_in_flight;
  q.flags = file.policy().realtime ? DRM_NPU_QUOTA_REALTIME : 0u;
  return q;
}

std::shared_ptr<Context> find_context(File& file, uint64_t id) {
  if (id == 0 || id > UINT32_MAX) return nullptr;
  std::lock_guard lk(file.mu);
  return file.find_context_locked(static_cast<uint32_t>(id));
}

}  // namespace

int ioctl_query(Driver& drv, File& file, void* data) {
  auto& q = *static_cast<drm_npu_query*>(data);
  if (q.flags != 0 || q.pad != 0) return -EINVAL;
  std::vector<std::byte> out;
  switch (q.type) {
    case DRM_NPU_QUERY_DEVICE_INFO:
      if (q.arg0 != 0 || q.arg1 != 0) return -EINVAL;
      put(out, device_info(drv.cfg));
      break;
    case DRM_NPU_QUERY_ENGINE_INFO:
      if (q.arg0 != 0 || q.arg1 != 0) return -EINVAL;
      engine_info(drv.cfg, out);
      break;
    case DRM_NPU_QUERY_CONTEXT_STATE: {
      if (q.arg1 != 0) return -EINVAL;
      const auto ctx = find_context(file, q.arg0);
      if (ctx == nullptr) return -ENOENT;
      put(out, drv.scheduler->context_state(*ctx));
      break;
    }
    case DRM_NPU_QUERY_COUNTERS:
      if (q.arg0 != 0 || q.arg1 != 0) return -EINVAL;
      put(out, drv.scheduler->counters());
      break;
    case DRM_NPU_QUERY_JOB_PROFILE: {
      const auto ctx = find_context(file, q.arg0);
      if (ctx == nullptr) return -ENOENT;
      if (const int r = drv.scheduler->job_profile(*ctx, q.arg1, out); r < 0) return r;
      break;
    }
    case DRM_NPU_QUERY_JOB_HAZARDS: {
      const auto ctx = find_context(file, q.arg0);
      if (ctx == nullptr) return -ENOENT;
      if (const int r = drv.scheduler->job_hazards(*ctx, q.arg1, out); r < 0) return r;
      break;
    }
    case DRM_NPU_QUERY_JOB_RACES: {
      const auto ctx = find_context(file, q.arg0);
      if (ctx == nullptr) return -ENOENT;
      if (const int r = drv.scheduler->job_races(*ctx, q.arg1, out); r < 0) return r;
      break;
    }
    case DRM_NPU_QUERY_QUOTA: {
      if (q.arg0 != 0 || q.arg1 != 0) return -EINVAL;
      put(out, quota(drv, file));
      break;
    }
    case DRM_NPU_QUERY_LAST_ERROR: {
      if (q.arg0 != 0 || q.arg1 != 0) return -EINVAL;
      std::lock_guard lk(file.mu);
      const auto* text = reinterpret_cast<const std::byte*>(file.last_error.data());
      out.assign(text, text + file.last_error.size());
      out.push_back(std::byte{0});
      break;
    }
    default:
      log().debug("query: unknown type {}", q.type);
      return -EINVAL;
  }
  const uint32_t full = static_cast<uint32_t>(out.size());
  if (q.size != 0) {
    const uint32_t n = std::min(q.size, full);
    if (const int r = drv.uaccess.copy_to(q.data, out.data(), n); r < 0) return r;
  }
  q.size = full;
  return 0;
}

}  // namespace npu::emu::kmd
