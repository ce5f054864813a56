// Scheduler: queues the jobs of every context of every file and feeds them to the Device one
// at a time. Policy: strict context priority (REALTIME > HIGH > NORMAL > LOW); within one
// priority, round-robin between contexts (one job each in turn) and FIFO within a context.
// A job with in-fences (API 1.3) is ready once they have all signalled; until then its
// context is passed over (the contexts behind it go on), and a fence whose job did not end OK
// aborts it with fault DEPENDENCY. Every job's out-fence signals as it retires. The cross-job
// synchronization checker runs at SUBMIT for jobs under the checker (job_races.h).
//
// Preemption (API 1.4, DeviceConfig::scheduling): a running job is offered every safe point
// of its command stream (ISA 1.2; Device::run's JobOptions::yield). It stops there when a job
// of a higher priority is ready, or, once it has run time_slice_cycles since it got the device,
// a job of its own priority in another context; it then goes back to the head of its
// context's queue (so the context's FIFO holds) with its profile so far, and its context to
// the head of its run list (preempted by a higher priority) or the tail (its slice used up).
// When picked again it resumes from the command after the safe point (JobOptions::begin),
// paying preempt_cycles of virtual time for the switch (job_parts.h). It keeps its inputs,
// its BOs' in-flight counts (BO_WAIT) and its place in the quota until it retires; its fence
// signals once, at retirement. A job without safe points runs to its end as before.
//
// Quotas: SUBMIT beyond the file's jobs in flight (quota.h: JobAccount, shared by the file's
// contexts) fails with -EDQUOT, after the context's own queue-full -ENOMEM.
//
// Two threads: the runner (picks a job, calls Device::run(), retires the job) and the
// watchdog (resets the device when the running job exceeds the configured time). A job that
// ends with status ERROR (a fault, or the watchdog's reset) bans its context: the context's
// queued jobs are aborted and later SUBMITs fail with ECANCELED; other contexts go on.
//
// Threading: every public method may be called from any thread. One mutex guards the run
// lists, the contexts' scheduling state, job results and the counters; each context has a
// condition variable notified when one of its jobs retires (WAIT and drain sleep on it).
// The submit path notifies the runner only when it sleeps, and the runner the watchdog only
// when the watchdog is disarmed, so a busy device costs no extra wake-ups per job. The runner
// is also the device's command processor (Device::run executes the job on the calling
// thread). Before parking, the runner and WAIT spin briefly (npu/emu/spin_wait.h) on two
// lock-free counters, jobs queued and jobs retired, so a job submitted or retired within
// microseconds is picked up without a futex wake-up (issue 9).
//
// WAIT runs jobs itself when it would otherwise sleep while the device idles: while the next
// job the runner would pick is the one it waits for or one ahead of it in its context, no job
// is running, and its deadline cannot pass before the job ends (no deadline, or one past the
// watchdog period, which bounds any job).
// The job then runs on the waiting thread exactly as on the runner (the same bookkeeping, the
// watchdog, retirement), and a job submitted and waited for costs no thread hand-off at all.
// The runner never starts a job while another one runs, whichever thread runs it.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "context.h"
#include "job.h"
#include "npu/emu/device.h"
#include "npu_accel.h"

namespace npu::emu::kmd {

class Scheduler {
 public:
  /// The watchdog (cfg.watchdog_ms, 0 disables it) and the preemption policy
  /// (cfg.scheduling) come from the device config.
  Scheduler(Device& device, const isa::DeviceConfig& cfg);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Assigns the job its seqno and queues it. 0, or -ENOENT (context destroyed),
  /// -ECANCELED (banned), -ENOMEM (retention ring full of unretired jobs), -EDQUOT (the file's
  /// jobs in flight at their limit).
  int submit(Context& ctx, const std::shared_ptr<Job>& job);

  /// Marks the context destroyed, aborts its queued jobs and waits for its running job.
  void drain(Context& ctx);

  // Fences and queries (fence.cpp).

  /// WAIT on ctx: fills status/fault/times/cycles. 0, -ENOENT, -EBUSY, -ETIMEDOUT.
  int wait(Context& ctx, drm_npu_wait& w);
  /// QUERY CONTEXT_STATE.
  drm_npu_context_state context_state(const Context& ctx);
  /// QUERY JOB_PROFILE: header plus entries into `out`. 0, -ENOENT, -EBUSY (not retired).
  int job_profile(const Context& ctx, uint64_t seqno, std::vector<std::byte>& out);
  /// QUERY JOB_HAZARDS: header plus hazards into `out`. 0, -ENOENT, -EBUSY (not retired).
  int job_hazards(const Context& ctx, uint64_t seqno, std::vector<std::byte>& out);
  /// QUERY COUNTERS.
  drm_npu_counters counters();
  /// BO_WAIT: 0 once no queued or running job lists `mem`; -EBUSY (timeout_ns 0) or
  /// -ETIMEDOUT (the absolute CLOCK_MONOTONIC deadline passed) while one does.
  int wait_idle(const BoMemory& mem, int64_t timeout_ns);
  /// QUERY JOB_RACES: header plus races into `out`. 0, -ENOENT.
  int job_races(const Context& ctx, uint64_t seqno, std::vector<std::byte>& out);
  /// CTX_EVENTS: `fd` (an eventfd the context then owns) counts the context's faults and every
  /// device reset. -ENOENT when the context is being destroyed.
  int add_event_fd(Context& ctx, int fd);

 private:
  using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC on Linux

  void run_loop();
  /// Runs `job` (just picked, mu_ held by `lk`) on this thread and retires it; returns with
  /// `lk` held again.
  void run_picked(std::unique_lock<std::mutex>& lk, std::shared_ptr<Job> job);
  /// Whether a WAIT for `job` until `deadline` may run the next pick on the waiting thread
  /// (see above).
  bool waiter_may_run_locked(const Job& job, Clock::time_point deadline) const;
  /// The job pick_locked() would take next, without taking it; nullptr when none is ready
  /// (or the next one would be aborted for a failed dependency).
  const Job* peek_locked() const;
  void watchdog_loop();  // watchdog.cpp
  bool runlists_empty() const;
  /// The next job to run (see the header), taken off its queue; nullptr when none is ready.
  /// Aborts the queued jobs whose dependencies failed on the way.
  std::shared_ptr<Job> pick_locked();
  /// Retires `job` (queued, never run) as ABORTED with fault DEPENDENCY if one of its
  /// in-fences signalled a job that did not end OK; true when it did.
  bool abort_if_dependency_failed_locked(Job& job);
  /// Marks a queued job aborted (never ran) with `fault`, signals its fence.
  void abort_job_locked(Job& job, const drm_npu_fault& fault, uint64_t now_ns);
  /// The jobs queued or running (the cross-job checker's other side).
  std::vector<const Job*> pending_locked() const;
  void retire_locked(Job& job, JobResult&& result, uint64_t end_ns, bool reset_by_watchdog);
  /// Whether the running `job`, at a safe point `cycle` cycles into its current part, should
  /// give the device up (see the header); notes why in the job. Called on a device thread.
  bool should_yield(Job& job, uint64_t cycle);
  /// The context's head job is ready to run (its in-fences signalled OK).
  static bool head_ready_locked(const Context& ctx);
  /// `job` stopped at a safe point (result.resume_at): keeps its part and puts it back at the
  /// head of its context's queue (or aborts it when the context went away meanwhile).
  void requeue_preempted_locked(const std::shared_ptr<Job>& job, JobResult&& result);
  void ban_locked(Context& ctx, const drm_npu_fault& fault, uint64_t seqno);
  /// Logs the hazards of a job the device config had checked (no caller reads them).
  void log_hazards_locked(const Job& job);
  void abort_queued_locked(Context& ctx);
  void account_locked(const JobProfile& p);

  Device& device_;
  const std::chrono::milliseconds watchdog_;
  const isa::SchedulingConfig sched_;

  std::mutex mu_;
  std::condition_variable work_cv_;      // runner: a job was queued / stop
  std::condition_variable watchdog_cv_;  // watchdog: a job started / stop
  std::array<std::deque<Context*>, DRM_NPU_PRIORITY_REALTIME + 1> runlists_;
  bool stop_ = false;
  bool runner_idle_ = false;
  bool watchdog_idle_ = false;

  // The job on the device (the thread running it sets it, the watchdog reads it).
  Job* running_ = nullptr;
  Clock::time_point running_since_{};
  bool reset_issued_ = false;  // the watchdog reset the device during running_

  drm_npu_counters counters_{};
  uint64_t next_job_id_ = 1;
  std::vector<Context*> evented_;  // contexts with CTX_EVENTS descriptors (drain removes)

  uint32_t bo_waiters_ = 0;        // threads in wait_idle()
  std::condition_variable bo_cv_;  // notified when jobs retire while bo_waiters_ > 0

  // Bumped (under mu_) when a job is queued (or stop_ is set) and when jobs retire; read
  // without the lock by the spinning runner and waiters, which then re-check under mu_.
  std::atomic<uint64_t> queued_{0};
  std::atomic<uint64_t> retired_{0};

  std::thread runner_;
  std::thread watchdog_thread_;
};

}  // namespace npu::emu::kmd
