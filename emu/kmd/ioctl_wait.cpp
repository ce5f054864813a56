// WAIT: block until a job retires or an absolute CLOCK_MONOTONIC deadline passes.
#include "driver.h"

namespace npu::emu::kmd {

int ioctl_wait(Driver& drv, File& file, void* data) {
  auto& w = *static_cast<drm_npu_wait*>(data);
  // Negative deadlines are rejected rather than taken as "forever": pass INT64_MAX for that.
  if (w.flags != 0 || w.pad != 0 || w.timeout_ns < 0) return -EINVAL;
  std::shared_ptr<Context> ctx;
  {
    std::lock_guard lk(file.mu);
    ctx = file.find_context_locked(w.ctx_id);
  }
  if (ctx == nullptr) return -ENOENT;
  return drv.scheduler->wait(*ctx, w);
}

}  // namespace npu::emu::kmd
