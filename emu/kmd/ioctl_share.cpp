// BO_EXPORT and BO_IMPORT (API 1.3): a BO's memory handed out as a descriptor and taken in by
// another file, of this process or another, as DRM PRIME does. The descriptor is a PeerTable
// end: it names the memory for as long as a copy of it is open, and keeps the memory alive
// that long (as a dma-buf holds its GEM object).
// Difference with the kernel: a dma-buf can be mmap()ed itself; this descriptor is a name
// only — import it, then map the BO through the importing file.
#include <fcntl.h>
#include <unistd.h>

#include "driver.h"
#include "log.h"

namespace npu::emu::kmd {

int ioctl_bo_export(Driver& drv, File& file, void* data) {
  auto& a = *static_cast<drm_npu_bo_export*>(data);
  a.fd = -1;
  if ((a.flags & ~static_cast<uint32_t>(DRM_NPU_EXPORT_CLOEXEC)) != 0 || a.pad != 0) {
    return -EINVAL;
  }
  std::shared_ptr<BoMemory> mem;
  {
    std::lock_guard lk(file.mu);
    const auto bo = file.find_bo_locked(a.handle);
    if (bo == nullptr) return -ENOENT;
    mem = bo->mem;
  }
  PeerTable<BoMemory>::Handed handed;
  if (const int r =
          drv.exports.hand_out(std::move(mem), (a.flags & DRM_NPU_EXPORT_CLOEXEC) != 0, handed);
      r < 0) {
    return r == -ENFILE ? -EMFILE : r;
  }
  a.fd = handed.user_fd;
  log().trace("bo_export: handle {} -> fd {}", a.handle, a.fd);
  return 0;
}

int ioctl_bo_import(Driver& drv, File& file, void* data) {
  auto& a = *static_cast<drm_npu_bo_import*>(data);
  int err = 0;
  std::shared_ptr<BoMemory> mem = drv.exports.find(a.fd, err);
  if (mem == nullptr) {
    log().debug("bo_import: fd {} is {}", a.fd, err == EBADF ? "not open" : "no exported bo");
    return -err;
  }
  if ((a.flags & ~DRM_NPU_BO_FLAGS_VALID) != 0 || a.pad != 0) return -EINVAL;
  if (!(a.flags & DRM_NPU_BO_FIXED_VA) && a.device_addr != 0) return -EINVAL;
  std::lock_guard lk(file.mu);
  if (file.closed) return -EBADF;
  file.last_error.clear();
  bool existed = false;
  auto bo = file.import_bo_locked(std::move(mem), a.flags, a.device_addr, existed);
  if (!bo) {
    log().log(bo.error().code == EDQUOT ? spdlog::level::warn : spdlog::level::debug, "fd {}: {}",
              file.fd(), bo.error().message);
    file.last_error = bo.error().message;
    return -bo.error().code;
  }
  a.handle = (*bo)->handle;
  a.size = (*bo)->size;
  a.device_addr = (*bo)->va;
  if (existed) a.flags |= DRM_NPU_BO_IMPORT_EXISTED;
  log().trace("bo_import: fd {} -> handle {} va {:#x}", a.fd, a.handle, a.device_addr);
  return 0;
}

}  // namespace npu::emu::kmd
