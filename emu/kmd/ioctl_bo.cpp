// BO_CREATE, BO_INFO, BO_WAIT, BO_CLOSE.
#include "driver.h"
#include "log.h"

namespace npu::emu::kmd {

int ioctl_bo_create(Driver& drv, File& file, void* data) {
  auto& a = *static_cast<drm_npu_bo_create*>(data);
  if (a.size == 0 || (a.flags & ~DRM_NPU_BO_FLAGS_VALID) != 0) return -EINVAL;
  if (!(a.flags & DRM_NPU_BO_FIXED_VA) && a.device_addr != 0) return -EINVAL;
  if (a.size > drv.cfg.max_bo_size) return -ENOMEM;
  std::lock_guard lk(file.mu);
  if (file.closed) return -EBADF;
  file.last_error.clear();
  auto bo = file.create_bo_locked(a.size, a.flags, a.device_addr);
  if (!bo) {
    log().log(bo.error().code == EDQUOT ? spdlog::level::warn : spdlog::level::debug, "fd {}: {}",
              file.fd(), bo.error().message);
    file.last_error = bo.error().message;
    return -bo.error().code;
  }
  a.handle = (*bo)->handle;
  a.device_addr = (*bo)->va;
  log().trace("bo_create: handle {} size {} va {:#x}", a.handle, (*bo)->size, a.device_addr);
  return 0;
}

int ioctl_bo_info(Driver& /*drv*/, File& file, void* data) {
  auto& a = *static_cast<drm_npu_bo_info*>(data);
  std::lock_guard lk(file.mu);
  const auto bo = file.find_bo_locked(a.handle);
  if (bo == nullptr) return -ENOENT;
  a.flags = bo->flags;
  a.size = bo->size;
  a.device_addr = bo->va;
  a.mmap_offset = bo->mmap_offset;
  return 0;
}

int ioctl_bo_wait(Driver& drv, File& file, void* data) {
  const auto& a = *static_cast<drm_npu_bo_wait*>(data);
  if (a.flags != 0 || a.timeout_ns < 0) return -EINVAL;
  std::shared_ptr<BoMemory> mem;
  {
    std::lock_guard lk(file.mu);
    const auto bo = file.find_bo_locked(a.handle);
    if (bo == nullptr) return -ENOENT;
    mem = bo->mem;
  }
  return drv.scheduler->wait_idle(*mem, a.timeout_ns);
}

int ioctl_bo_close(Driver& /*drv*/, File& file, void* data) {
  auto& a = *static_cast<drm_npu_bo_close*>(data);
  if (a.pad != 0) return -EINVAL;
  std::lock_guard lk(file.mu);
  return file.close_bo_locked(a.handle) ? 0 : -ENOENT;
}

}  // namespace npu::emu::kmd
