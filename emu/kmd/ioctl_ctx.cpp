// CTX_CREATE, CTX_DESTROY.
#include "driver.h"
#include "log.h"

namespace npu::emu::kmd {

int ioctl_ctx_create(Driver& /*drv*/, File& file, void* data) {
  auto& a = *static_cast<drm_npu_ctx_create*>(data);
  // Difference with the kernel: REALTIME needs no privilege (a kernel would ask for
  // CAP_SYS_NICE).
  if (a.priority > DRM_NPU_PRIORITY_REALTIME || a.flags != 0 || a.pad != 0) return -EINVAL;
  std::lock_guard lk(file.mu);
  if (file.closed) return -EBADF;
  const auto ctx = file.create_context_locked(a.priority);
  if (ctx == nullptr) return -ENOMEM;
  a.ctx_id = ctx->id();
  log().trace("ctx_create: ctx {} priority {}", a.ctx_id, a.priority);
  return 0;
}

int ioctl_ctx_destroy(Driver& drv, File& file, void* data) {
  auto& a = *static_cast<drm_npu_ctx_destroy*>(data);
  if (a.pad != 0) return -EINVAL;
  std::shared_ptr<Context> ctx;
  {
    std::lock_guard lk(file.mu);
    ctx = file.take_context_locked(a.ctx_id);
  }
  if (ctx == nullptr) return -ENOENT;
  drv.scheduler->drain(*ctx);  // aborts queued jobs, waits for the running one
  return 0;
}

}  // namespace npu::emu::kmd
