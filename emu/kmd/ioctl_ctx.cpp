// CTX_CREATE, CTX_DESTROY, CTX_EVENTS.
#include <fcntl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "driver.h"
#include "log.h"

namespace npu::emu::kmd {

int ioctl_ctx_create(Driver& /*drv*/, File& file, void* data) {
  auto& a = *static_cast<drm_npu_ctx_create*>(data);
  if (a.priority > DRM_NPU_PRIORITY_REALTIME || a.flags != 0 || a.pad != 0) return -EINVAL;
  std::lock_guard lk(file.mu);
  if (file.closed) return -EBADF;
  file.last_error.clear();
  // As amdgpu and i915, a raised priority is for privileged callers: REALTIME needs
  // CAP_SYS_NICE of the opener (or the driver's allow-list), decided at open() (File::Policy).
  const auto ctx = file.create_context_locked(a.priority);
  if (!ctx) {
    log().warn("fd {}: {}", file.fd(), ctx.error().message);
    file.last_error = ctx.error().message;
    return -ctx.error().code;
  }
  a.ctx_id = (*ctx)->id();
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

int ioctl_ctx_events(Driver& drv, File& file, void* data) {
  auto& a = *static_cast<drm_npu_ctx_events*>(data);
  a.fd = -1;
  if (a.flags != 0 || a.pad != 0) return -EINVAL;
  std::shared_ptr<Context> ctx;
  {
    std::lock_guard lk(file.mu);
    ctx = file.find_context_locked(a.ctx_id);
  }
  if (ctx == nullptr) return -ENOENT;
  // The driver keeps one descriptor of the eventfd (it writes there), the caller gets another
  // of the same object.
  const int kept = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (kept < 0) return errno == ENFILE ? -EMFILE : -errno;
  const int user = ::fcntl(kept, F_DUPFD_CLOEXEC, 0);
  if (user < 0) {
    const int err = errno;
    ::close(kept);
    return err == ENFILE ? -EMFILE : -err;
  }
  if (const int r = drv.scheduler->add_event_fd(*ctx, kept); r < 0) {
    ::close(kept);
    ::close(user);
    return r;
  }
  a.fd = user;
  return 0;
}

}  // namespace npu::emu::kmd
