// JobState: semaphores with virtual-time tokens and first-fault latching.
#include "job_state.h"

#include <algorithm>

#include "npu_isa.h"

namespace npu::emu {

void JobState::begin(uint32_t num_semaphores, uint32_t sem_max) {
  std::lock_guard lk(mu_);
  // Reset in place: a cleared deque keeps its map and first node, so a job allocates no
  // semaphore storage unless its signals outgrow the previous job's.
  sems_.resize(num_semaphores);
  for (Sem& s : sems_) {
    s.value = 0;
    s.tokens.clear();
  }
  sem_max_ = sem_max;
  aborted_.store(false, std::memory_order_release);
  have_fault_ = false;
  fault_ = {};
  fault_time_ = 0;
}

void JobState::fault(const drm_npu_fault& f, uint64_t time) {
  {
    std::lock_guard lk(mu_);
    if (!have_fault_ || time < fault_time_ ||
        (time == fault_time_ && f.cmd_index < fault_.cmd_index)) {
      fault_ = f;
      fault_time_ = time;
      have_fault_ = true;
    }
    aborted_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

void JobState::reset() {
  {
    std::lock_guard lk(mu_);
    drm_npu_fault f{};
    f.kind = DRM_NPU_FAULT_WATCHDOG;
    f.engine = NPU_ENGINE_CP;
    fault_ = f;  // a reset overrides any fault: the device was reset
    have_fault_ = true;
    aborted_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

std::optional<uint64_t> JobState::fault_time() const {
  std::lock_guard lk(mu_);
  if (!have_fault_ || fault_.kind == DRM_NPU_FAULT_WATCHDOG) return std::nullopt;
  return fault_time_;
}

drm_npu_fault JobState::result_fault() const {
  std::lock_guard lk(mu_);
  return have_fault_ ? fault_ : drm_npu_fault{};
}

bool JobState::signal(uint32_t engine, uint32_t cmd_index, uint32_t sem, uint32_t count,
                      uint64_t time) {
  bool ok = true;
  {
    std::unique_lock lk(mu_);
    if (sem >= sems_.size() || sems_[sem].value + count > sem_max_) {
      ok = false;
    } else {
      sems_[sem].value += count;
      sems_[sem].tokens.push_back({time, count, cmd_index});
    }
  }
  if (!ok) {
    fault({DRM_NPU_FAULT_SEMAPHORE, engine, cmd_index, 0, sem}, time);
    return false;
  }
  cv_.notify_all();
  return true;
}

bool JobState::wait(uint32_t engine, uint32_t cmd_index, uint32_t sem, uint32_t count,
                    uint64_t& time, uint32_t& completed_by) {
  std::unique_lock lk(mu_);
  if (sem >= sems_.size() || count > sem_max_) {
    lk.unlock();
    fault({DRM_NPU_FAULT_SEMAPHORE, engine, cmd_index, 0, sem}, time);
    return false;
  }
  Sem& s = sems_[sem];
  cv_.wait(lk, [&] { return aborted() || s.value >= count; });
  if (aborted()) return false;
  uint64_t satisfied = 0;
  for (uint32_t need = count; need > 0;) {
    Token& t = s.tokens.front();
    uint32_t take = std::min(need, t.count);
    satisfied = std::max(satisfied, t.time);
    completed_by = t.cmd_index;
    t.count -= take;
    need -= take;
    if (t.count == 0) s.tokens.pop_front();
  }
  s.value -= count;
  time = std::max(time, satisfied);
  return true;
}

}  // namespace npu::emu
