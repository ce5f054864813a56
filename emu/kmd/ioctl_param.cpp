// GET_PARAM: one device parameter, from the DeviceConfig.
#include "driver.h"
#include "npu_isa.h"
#include "va_allocator.h"

namespace npu::emu::kmd {

uint64_t device_capabilities(const isa::DeviceConfig& cfg) {
  uint64_t caps = DRM_NPU_CAP_PRIORITY | DRM_NPU_CAP_JOB_PROFILE | DRM_NPU_CAP_SKIP_VALIDATION |
                  DRM_NPU_CAP_RACECHECK | DRM_NPU_CAP_BO_WAIT | DRM_NPU_CAP_FENCES |
                  DRM_NPU_CAP_BO_SHARING | DRM_NPU_CAP_CTX_EVENTS | DRM_NPU_CAP_QUOTAS;
  if (cfg.scheduling.preemption) caps |= DRM_NPU_CAP_PREEMPTION;
  if (cfg.features & NPU_FEATURE_INT8) caps |= DRM_NPU_CAP_INT8;
  if (cfg.features & NPU_FEATURE_FP32) caps |= DRM_NPU_CAP_FP32;
  return caps;
}

int ioctl_get_param(Driver& drv, File& /*file*/, void* data) {
  auto& a = *static_cast<drm_npu_get_param*>(data);
  const isa::DeviceConfig& cfg = drv.cfg;
  if (a.index != 0) return -EINVAL;
  switch (a.param) {
    case DRM_NPU_PARAM_DEVICE_ID:
      a.value = cfg.device_id;
      break;
    case DRM_NPU_PARAM_REVISION:
      a.value = cfg.revision;
      break;
    case DRM_NPU_PARAM_PLATFORM:
      a.value = DRM_NPU_PLATFORM_EMULATOR;
      break;
    case DRM_NPU_PARAM_API_VERSION:
      a.value = (DRM_NPU_API_VERSION_MAJOR << 16) | DRM_NPU_API_VERSION_MINOR;
      break;
    case DRM_NPU_PARAM_ISA_VERSION:
      a.value = (NPU_ISA_VERSION_MAJOR << 16) | NPU_ISA_VERSION_MINOR;
      break;
    case DRM_NPU_PARAM_SRAM_SIZE:
      a.value = cfg.sram_size;
      break;
    case DRM_NPU_PARAM_SRAM_BANKS:
      a.value = cfg.sram_banks;
      break;
    case DRM_NPU_PARAM_NUM_ENGINES:
      a.value = NPU_NUM_ENGINES;
      break;
    case DRM_NPU_PARAM_ENGINE_MASK:
      a.value = (1u << NPU_NUM_ENGINES) - 1;
      break;
    case DRM_NPU_PARAM_CLOCK_HZ:
      a.value = cfg.clock_hz;
      break;
    case DRM_NPU_PARAM_CAPABILITIES:
      a.value = device_capabilities(cfg);
      break;
    case DRM_NPU_PARAM_NUM_SEMAPHORES:
      a.value = cfg.num_semaphores;
      break;
    case DRM_NPU_PARAM_WATCHDOG_MS:
      a.value = cfg.watchdog_ms;
      break;
    case DRM_NPU_PARAM_MAX_BO_SIZE:
      a.value = cfg.max_bo_size;
      break;
    case DRM_NPU_PARAM_FEATURES:
      a.value = cfg.features;
      break;
    case DRM_NPU_PARAM_VA_START:
      a.value = VaAllocator::kBase;
      break;
    case DRM_NPU_PARAM_VA_END:
      a.value = VaAllocator::kEnd;
      break;
    case DRM_NPU_PARAM_VA_ALIGN:
      a.value = VaAllocator::kAlign;
      break;
    case DRM_NPU_PARAM_PREEMPT_CYCLES:
      a.value = cfg.scheduling.preempt_cycles;
      break;
    case DRM_NPU_PARAM_TIME_SLICE_CYCLES:
      a.value = cfg.scheduling.time_slice_cycles;
      break;
    default:
      return -EINVAL;
  }
  return 0;
}

}  // namespace npu::emu::kmd
