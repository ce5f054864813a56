#include "context.h"

#include <unistd.h>

namespace npu::emu::kmd {

Context::~Context() {
  for (int fd : event_fds) ::close(fd);
}

void Context::post_event() {
  const uint64_t one = 1;
  for (int fd : event_fds) {
    [[maybe_unused]] const ssize_t w = ::write(fd, &one, sizeof(one));
  }
}

std::shared_ptr<Job> Context::find(uint64_t seqno) const {
  if (seqno == 0 || seqno > last_submitted) return nullptr;
  if (last_submitted - seqno >= kRetained) return nullptr;
  const auto& job = ring_[seqno % kRetained];
  return job != nullptr && job->seqno == seqno ? job : nullptr;
}

bool Context::can_accept() const {
  const auto& slot = ring_[(last_submitted + 1) % kRetained];
  return slot == nullptr || slot->retired;
}

void Context::install(const std::shared_ptr<Job>& job) {
  job->seqno = ++last_submitted;
  job->ctx = this;
  ring_[job->seqno % kRetained] = job;
}

drm_npu_context_state Context::state() const {
  drm_npu_context_state s{};
  s.ctx_id = id_;
  s.state =
      banned.load(std::memory_order_relaxed) ? DRM_NPU_CTX_STATE_BANNED : DRM_NPU_CTX_STATE_ACTIVE;
  s.priority = priority_;
  s.reset_count = reset_count;
  s.last_submitted = last_submitted;
  s.last_completed = last_completed;
  s.fault_seqno = fault_seqno;
  s.last_fault = last_fault;
  return s;
}

}  // namespace npu::emu::kmd
