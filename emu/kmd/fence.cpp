// The fence side of the Scheduler: WAIT on a job's sequence number and the queries that read
// retired jobs (context state, job profile, device counters).
#include <algorithm>
#include <cstring>

#include "npu/emu/spin_wait.h"
#include "scheduler.h"

namespace npu::emu::kmd {

int Scheduler::wait(Context& ctx, drm_npu_wait& w) {
  std::unique_lock lk(mu_);
  const std::shared_ptr<Job> job = ctx.find(w.seqno);
  if (job == nullptr) return -ENOENT;
  if (!job->retired) {
    if (w.timeout_ns == 0) {
      w.status = DRM_NPU_JOB_TIMEOUT;
      return -EBUSY;
    }
    // timeout_ns is absolute CLOCK_MONOTONIC, which is what steady_clock reads on Linux.
    const Clock::time_point deadline =
        w.timeout_ns == INT64_MAX ? Clock::time_point::max()
                                  : Clock::time_point{std::chrono::nanoseconds(w.timeout_ns)};
    bool ran = false;
    while (waiter_may_run_locked(*job, deadline)) {  // no hand-off: run here (scheduler.h)
      run_picked(lk, pick_locked());
      ran = true;
    }
    // The runner may have been woken for a job queued meanwhile and gone back to sleep.
    if (ran && runner_idle_ && !runlists_empty()) work_cv_.notify_one();
    // Spin briefly first: most jobs retire within microseconds (spin_wait.h).
    const Clock::time_point spin_end = std::min(deadline, Clock::now() + kSpinBudget);
    while (!job->retired && Clock::now() < spin_end) {
      const uint64_t seen = retired_.load(std::memory_order_relaxed);
      lk.unlock();
      spin_until([&] {
        return retired_.load(std::memory_order_acquire) != seen || Clock::now() >= spin_end;
      });
      lk.lock();
    }
    ++ctx.waiters;
    const bool done = ctx.cv.wait_until(lk, deadline, [&] { return job->retired; });
    --ctx.waiters;
    if (!done) {
      w.status = DRM_NPU_JOB_TIMEOUT;
      return -ETIMEDOUT;
    }
  }
  w.status = job->status;
  w.fault = job->fault;
  w.submit_ns = job->submit_ns;
  w.start_ns = job->start_ns;
  w.end_ns = job->end_ns;
  w.cycles = job->profile.cycles;
  return 0;
}

int Scheduler::wait_idle(const BoMemory& mem, int64_t timeout_ns) {
  auto idle = [&] { return mem.jobs_in_flight.load(std::memory_order_acquire) == 0; };
  std::unique_lock lk(mu_);
  if (idle()) return 0;
  if (timeout_ns == 0) return -EBUSY;
  const Clock::time_point deadline = timeout_ns == INT64_MAX
                                         ? Clock::time_point::max()
                                         : Clock::time_point{std::chrono::nanoseconds(timeout_ns)};
  // A job drops its inputs just before it retires (outside the lock); the retirement, under
  // the lock, notifies, so the predicate is re-checked after every drop.
  ++bo_waiters_;
  const bool done = bo_cv_.wait_until(lk, deadline, idle);
  --bo_waiters_;
  return done ? 0 : -ETIMEDOUT;
}

int Scheduler::job_races(const Context& ctx, uint64_t seqno, std::vector<std::byte>& out) {
  std::lock_guard lk(mu_);
  const std::shared_ptr<Job> job = ctx.find(seqno);
  if (job == nullptr) return -ENOENT;
  drm_npu_job_races h{};
  h.seqno = seqno;
  h.flags = job->racecheck ? DRM_NPU_HAZARDS_CHECKED : 0u;
  h.num_races = static_cast<uint32_t>(job->races.size());
  h.total = job->races_total;
  const size_t entries = job->races.size() * sizeof(drm_npu_job_race);
  out.resize(sizeof(h) + entries);
  std::memcpy(out.data(), &h, sizeof(h));
  if (entries > 0) std::memcpy(out.data() + sizeof(h), job->races.data(), entries);
  return 0;
}

int Scheduler::add_event_fd(Context& ctx, int fd) {
  std::lock_guard lk(mu_);
  if (ctx.destroyed) return -ENOENT;
  ctx.event_fds.push_back(fd);
  if (std::find(evented_.begin(), evented_.end(), &ctx) == evented_.end()) {
    evented_.push_back(&ctx);
  }
  return 0;
}

drm_npu_context_state Scheduler::context_state(const Context& ctx) {
  std::lock_guard lk(mu_);
  return ctx.state();
}

int Scheduler::job_profile(const Context& ctx, uint64_t seqno, std::vector<std::byte>& out) {
  std::lock_guard lk(mu_);
  const std::shared_ptr<Job> job = ctx.find(seqno);
  if (job == nullptr) return -ENOENT;
  if (!job->retired) return -EBUSY;
  const JobProfile& p = job->profile;
  drm_npu_job_profile h{};
  h.seqno = seqno;
  h.cycles = p.cycles;
  for (size_t e = 0; e < DRM_NPU_MAX_ENGINES; ++e) h.busy_cycles[e] = p.busy_cycles[e];
  h.dma_bytes_in = p.dma_bytes_in;
  h.dma_bytes_out = p.dma_bytes_out;
  h.macs = p.macs;
  h.vector_elements = p.vector_elements;
  h.semaphore_stall_cycles = p.semaphore_stall_cycles;
  h.num_cmds = static_cast<uint32_t>(p.timeline.size());
  h.preemptions = p.preemptions;
  const size_t entries = p.timeline.size() * sizeof(drm_npu_cmd_profile);
  out.resize(sizeof(h) + entries);
  std::memcpy(out.data(), &h, sizeof(h));
  if (entries > 0) std::memcpy(out.data() + sizeof(h), p.timeline.data(), entries);
  return 0;
}

int Scheduler::job_hazards(const Context& ctx, uint64_t seqno, std::vector<std::byte>& out) {
  std::lock_guard lk(mu_);
  const std::shared_ptr<Job> job = ctx.find(seqno);
  if (job == nullptr) return -ENOENT;
  if (!job->retired) return -EBUSY;
  const RaceReport& r = job->profile.race;
  drm_npu_job_hazards h{};
  h.seqno = seqno;
  h.flags = (r.checked ? DRM_NPU_HAZARDS_CHECKED : 0u) | (r.partial ? DRM_NPU_HAZARDS_PARTIAL : 0u);
  h.num_hazards = static_cast<uint32_t>(r.hazards.size());
  h.total = r.total;
  const size_t entries = r.hazards.size() * sizeof(drm_npu_hazard);
  out.resize(sizeof(h) + entries);
  std::memcpy(out.data(), &h, sizeof(h));
  if (entries > 0) std::memcpy(out.data() + sizeof(h), r.hazards.data(), entries);
  return 0;
}

drm_npu_counters Scheduler::counters() {
  std::lock_guard lk(mu_);
  return counters_;
}

}  // namespace npu::emu::kmd
