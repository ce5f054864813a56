// The watchdog thread of the Scheduler: resets the device when the running job has been on it
// longer than the configured time. It sleeps until the running job's deadline (re-arming for
// whatever job runs when it wakes), or indefinitely when nothing runs; the runner wakes it
// only on an idle-to-busy transition. The reset is issued under the scheduler lock, so the
// runner cannot start another job in between: only the job that overran is stopped.
#include "log.h"
#include "scheduler.h"

namespace npu::emu::kmd {

void Scheduler::watchdog_loop() {
  std::unique_lock lk(mu_);
  while (!stop_ || running_ != nullptr) {
    if (running_ == nullptr || reset_issued_ || watchdog_.count() == 0) {
      if (stop_) break;
      watchdog_idle_ = true;
      watchdog_cv_.wait(lk);
      watchdog_idle_ = false;
      continue;
    }
    const auto deadline = running_since_ + watchdog_;
    if (Clock::now() < deadline) {
      watchdog_cv_.wait_until(lk, deadline);
      continue;
    }
    reset_issued_ = true;  // counted in device_resets when the guilty job retires
    log().warn("watchdog: ctx {} seqno {} ran longer than {} ms; resetting the device",
               running_->ctx->id(), running_->seqno, watchdog_.count());
    device_.reset();
  }
}

}  // namespace npu::emu::kmd
