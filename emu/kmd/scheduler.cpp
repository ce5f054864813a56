#include "scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "job_parts.h"
#include "job_races.h"
#include "log.h"
#include "npu/emu/spin_wait.h"
#include "npu/isa/validate.h"
#include "uaccess.h"

namespace npu::emu::kmd {

Scheduler::Scheduler(Device& device, const isa::DeviceConfig& cfg)
    : device_(device), watchdog_(cfg.watchdog_ms), sched_(cfg.scheduling) {
  runner_ = std::thread([this] { run_loop(); });
  watchdog_thread_ = std::thread([this] { watchdog_loop(); });
}

Scheduler::~Scheduler() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
    queued_.fetch_add(1, std::memory_order_release);
    // Files are closed (and their contexts drained) before the scheduler goes; anything
    // still queued here is aborted.
    for (auto& list : runlists_) {
      while (!list.empty()) abort_queued_locked(*list.front());
    }
  }
  work_cv_.notify_all();
  runner_.join();
  watchdog_cv_.notify_all();
  watchdog_thread_.join();
}

int Scheduler::submit(Context& ctx, const std::shared_ptr<Job>& job) {
  bool wake = false;
  {
    std::lock_guard lk(mu_);
    if (ctx.destroyed) return -ENOENT;
    if (ctx.banned.load(std::memory_order_relaxed)) return -ECANCELED;
    if (!ctx.can_accept()) return -ENOMEM;
    JobAccount& jobs = ctx.jobs();
    if (jobs.in_flight.load(std::memory_order_relaxed) >= jobs.limit) return -EDQUOT;
    jobs.in_flight.fetch_add(1, std::memory_order_relaxed);
    ++counters_.jobs_submitted;
    job->id = next_job_id_++;
    job->ctx = &ctx;
    for (const auto& dep : job->deps) {  // the happens-before the fences give
      job->ancestors.push_back(dep->job_id);
      job->ancestors.insert(job->ancestors.end(), dep->ancestors.begin(), dep->ancestors.end());
    }
    std::sort(job->ancestors.begin(), job->ancestors.end());
    job->ancestors.erase(std::unique(job->ancestors.begin(), job->ancestors.end()),
                         job->ancestors.end());
    if (job->out_fence != nullptr) {
      job->out_fence->job_id = job->id;
      job->out_fence->ancestors = job->ancestors;
    }
    if (job->racecheck) find_job_races(*job, pending_locked());
    job->submit_ns = monotonic_ns();
    for (const auto& m : job->bos) m->jobs_in_flight.fetch_add(1, std::memory_order_relaxed);
    job->counted_in_flight = true;
    ctx.install(job);
    ctx.queue.push_back(job);
    if (!ctx.in_runlist) {
      runlists_[ctx.priority()].push_back(&ctx);
      ctx.in_runlist = true;
    }
    queued_.fetch_add(1, std::memory_order_release);
    wake = runner_idle_;
  }
  if (wake) work_cv_.notify_one();
  return 0;
}

void Scheduler::drain(Context& ctx) {
  std::unique_lock lk(mu_);
  ctx.destroyed = true;
  std::erase(evented_, &ctx);
  abort_queued_locked(ctx);
  ++ctx.waiters;
  ctx.cv.wait(lk, [&] { return !ctx.running; });
  --ctx.waiters;
}

bool Scheduler::runlists_empty() const {
  return std::all_of(runlists_.begin(), runlists_.end(), [](const auto& l) { return l.empty(); });
}

std::shared_ptr<Job> Scheduler::pick_locked() {
  for (auto it = runlists_.rbegin(); it != runlists_.rend(); ++it) {
    auto& list = *it;
    for (auto cit = list.begin(); cit != list.end();) {
      Context* ctx = *cit;
      while (!ctx->queue.empty() && abort_if_dependency_failed_locked(*ctx->queue.front())) {
        ctx->queue.pop_front();
      }
      if (ctx->queue.empty()) {
        ctx->in_runlist = false;
        cit = list.erase(cit);
        continue;
      }
      const Job& head = *ctx->queue.front();
      const bool ready = std::all_of(head.deps.begin(), head.deps.end(), [](const auto& d) {
        return d->signalled.load(std::memory_order_acquire);
      });
      if (!ready) {  // waits for a fence: the contexts behind it go on
        ++cit;
        continue;
      }
      std::shared_ptr<Job> job = std::move(ctx->queue.front());
      ctx->queue.pop_front();
      list.erase(cit);
      // Round-robin: a context with more work goes to the back of its priority's list.
      if (!ctx->queue.empty()) {
        list.push_back(ctx);
      } else {
        ctx->in_runlist = false;
      }
      return job;
    }
  }
  return nullptr;
}

bool Scheduler::abort_if_dependency_failed_locked(Job& job) {
  for (size_t i = 0; i < job.deps.size(); ++i) {
    const SyncFence& f = *job.deps[i];
    if (!f.signalled.load(std::memory_order_acquire) ||
        f.status.load(std::memory_order_relaxed) == DRM_NPU_JOB_OK) {
      continue;
    }
    drm_npu_fault fault{};
    fault.kind = DRM_NPU_FAULT_DEPENDENCY;
    fault.engine = NPU_ENGINE_CP;
    fault.address = i;
    log().info("ctx {} seqno {}: aborted: its in-fence {} (job {}) ended {}", job.ctx->id(),
               job.seqno, i, f.job_id, f.status.load());
    abort_job_locked(job, fault, monotonic_ns());
    job.ctx->last_completed = std::max(job.ctx->last_completed, job.seqno);
    if (job.ctx->waiters > 0) job.ctx->cv.notify_all();
    if (bo_waiters_ > 0) bo_cv_.notify_all();
    return true;
  }
  return false;
}

void Scheduler::abort_job_locked(Job& job, const drm_npu_fault& fault, uint64_t now_ns) {
  job.status = DRM_NPU_JOB_ABORTED;
  job.fault = fault;
  job.end_ns = now_ns;
  job.retired = true;
  job.profile = {};  // aborted jobs report zeros (a preempted one's parts are in the counters)
  job.ctx->jobs().in_flight.fetch_sub(1, std::memory_order_relaxed);
  ++counters_.jobs_aborted;
  job.release_inputs();
  job.deps.clear();
  if (job.out_fence != nullptr) job.out_fence->signal(DRM_NPU_JOB_ABORTED);
  retired_.fetch_add(1, std::memory_order_release);
}

std::vector<const Job*> Scheduler::pending_locked() const {
  std::vector<const Job*> out;
  if (running_ != nullptr) out.push_back(running_);
  for (const auto& list : runlists_) {
    for (const Context* ctx : list) {
      for (const auto& j : ctx->queue) out.push_back(j.get());
    }
  }
  return out;
}

void Scheduler::run_loop() {
  std::unique_lock lk(mu_);
  for (;;) {
    if (!stop_ && runlists_empty()) {  // spin briefly for the next job before parking
      const uint64_t seen = queued_.load(std::memory_order_relaxed);
      lk.unlock();
      spin_until([&] { return queued_.load(std::memory_order_acquire) != seen; });
      lk.lock();
    }
    // A job a WAIT runs on its own thread (fence.cpp) keeps the runner out until it retires;
    // queued jobs waiting for fences leave it idle until one signals.
    std::shared_ptr<Job> job;
    while (!stop_ && (running_ != nullptr || (job = pick_locked()) == nullptr)) {
      runner_idle_ = true;
      work_cv_.wait(lk);
      runner_idle_ = false;
    }
    if (stop_) {
      if (job != nullptr) abort_job_locked(*job, {}, monotonic_ns());
      break;
    }
    run_picked(lk, std::move(job));
  }
}

void Scheduler::run_picked(std::unique_lock<std::mutex>& lk, std::shared_ptr<Job> job) {
  job->ctx->running = true;
  running_ = job.get();
  running_since_ = Clock::now();  // the watchdog bounds each part of a preempted job
  reset_issued_ = false;
  if (job->resume_at == 0) job->start_ns = monotonic_ns();
  job->yield_reason = Job::Yield::kNone;
  const bool wake_watchdog = watchdog_idle_ && watchdog_.count() > 0;
  lk.unlock();
  if (wake_watchdog) watchdog_cv_.notify_one();

  log().trace("run ctx {} seqno {}{}", job->ctx->id(), job->seqno,
              job->resume_at != 0 ? fmt::format(" from command {}", job->resume_at) : "");
  JobOptions options;
  options.racecheck = job->racecheck;
  options.begin = job->resume_at;
  if (sched_.preemption || sched_.preempt_every_safe_point) {
    options.yield = [this, j = job.get()](uint64_t cycle) { return should_yield(*j, cycle); };
  }
  // The stress mode plays another job between the parts: nothing may survive in SRAM.
  if (job->resume_at != 0 && sched_.preempt_every_safe_point) device_.scramble_sram(job->id);
  JobResult result = device_.run(*job->program, job->mmu, options);
  const uint64_t end_ns = monotonic_ns();
  bool preempted = result.resume_at != 0 && result.status == DRM_NPU_JOB_OK;
  if (!preempted) job->release_inputs();  // the thread that ran a dequeued job owns its inputs

  lk.lock();
  const bool reset = reset_issued_;
  running_ = nullptr;
  account_locked(result.profile);  // what the device did in this part
  if (preempted && reset) {        // the watchdog fired as the part stopped: it is the guilty job
    result.status = DRM_NPU_JOB_ERROR;
    preempted = false;
    lk.unlock();
    job->release_inputs();
    lk.lock();
  }
  if (preempted) {
    requeue_preempted_locked(job, std::move(result));
    return;
  }
  if (job->resume_at != 0) {  // the last part of a preempted job: the job's whole profile
    JobProfile whole = std::move(job->profile);
    add_part(whole, std::move(result.profile));
    result.profile = std::move(whole);
  }
  retire_locked(*job, std::move(result), end_ns, reset);
}

bool Scheduler::head_ready_locked(const Context& ctx) {
  if (ctx.queue.empty()) return false;
  const Job& head = *ctx.queue.front();
  return std::all_of(head.deps.begin(), head.deps.end(), [](const auto& d) {
    return d->signalled.load(std::memory_order_acquire) &&
           d->status.load(std::memory_order_relaxed) == DRM_NPU_JOB_OK;
  });
}

bool Scheduler::should_yield(Job& job, uint64_t cycle) {
  std::lock_guard lk(mu_);
  if (sched_.preempt_every_safe_point) {
    job.yield_reason = Job::Yield::kStress;
    return true;
  }
  if (stop_ || !sched_.preemption) return false;
  const auto mine = static_cast<int>(job.ctx->priority());
  for (int p = DRM_NPU_PRIORITY_REALTIME; p >= mine; --p) {
    for (const Context* c : runlists_[static_cast<size_t>(p)]) {
      if (c == job.ctx || !head_ready_locked(*c)) continue;
      if (p > mine) {
        job.yield_reason = Job::Yield::kHigherPriority;
        return true;
      }
      if (sched_.time_slice_cycles > 0 && cycle >= sched_.time_slice_cycles) {
        job.yield_reason = Job::Yield::kTimeSlice;
        return true;
      }
      return false;
    }
  }
  return false;
}

void Scheduler::requeue_preempted_locked(const std::shared_ptr<Job>& job, JobResult&& result) {
  Context& ctx = *job->ctx;
  ctx.running = false;
  add_part(job->profile, std::move(result.profile));
  add_switch(job->profile, result.resume_at - 1, sched_.preempt_cycles);
  job->resume_at = result.resume_at;
  ++counters_.preemptions;
  counters_.preempt_cycles += sched_.preempt_cycles;
  counters_.total_cycles += sched_.preempt_cycles;
  log().trace("ctx {} seqno {}: preempted at command {} ({})", ctx.id(), job->seqno,
              result.resume_at - 1,
              job->yield_reason == Job::Yield::kHigherPriority ? "higher priority"
              : job->yield_reason == Job::Yield::kTimeSlice    ? "time slice"
                                                               : "stress");
  if (stop_ || ctx.destroyed || ctx.banned.load(std::memory_order_relaxed)) {
    // The context (or the driver) went away while the part ran: the rest never runs.
    job->release_inputs();
    abort_job_locked(*job, {}, monotonic_ns());
    ctx.last_completed = std::max(ctx.last_completed, job->seqno);
  } else {
    // Back to the head of its context's queue (FIFO within the context holds); the context
    // goes first among its priority when a higher one took over, last when its slice ran out.
    ctx.queue.push_front(job);
    auto& list = runlists_[ctx.priority()];
    const bool first = job->yield_reason != Job::Yield::kTimeSlice;
    if (ctx.in_runlist) std::erase(list, &ctx);
    if (first) {
      list.push_front(&ctx);
    } else {
      list.push_back(&ctx);
    }
    ctx.in_runlist = true;
  }
  queued_.fetch_add(1, std::memory_order_release);
  if (runner_idle_) work_cv_.notify_one();
  if (ctx.waiters > 0) ctx.cv.notify_all();
  if (bo_waiters_ > 0) bo_cv_.notify_all();
}

const Job* Scheduler::peek_locked() const {
  for (auto it = runlists_.rbegin(); it != runlists_.rend(); ++it) {
    for (const Context* ctx : *it) {
      if (ctx->queue.empty()) continue;
      const Job& head = *ctx->queue.front();
      bool ready = true;
      for (const auto& d : head.deps) {
        if (!d->signalled.load(std::memory_order_acquire)) {
          ready = false;
        } else if (d->status.load(std::memory_order_relaxed) != DRM_NPU_JOB_OK) {
          return nullptr;  // pick_locked() would abort it first: not a peek's business
        }
      }
      if (ready) return &head;
    }
  }
  return nullptr;
}

bool Scheduler::waiter_may_run_locked(const Job& job, Clock::time_point deadline) const {
  if (stop_ || running_ != nullptr || job.retired) return false;
  // The next pick must be a job the waiter waits for anyway: its own, or one ahead of it in
  // its context (FIFO); either way the device runs it before the waited job ends.
  const Job* next = peek_locked();
  if (next == nullptr || next->ctx != job.ctx) return false;
  if (deadline == Clock::time_point::max()) return true;
  return watchdog_.count() > 0 && deadline - Clock::now() > watchdog_ + watchdog_ / 2;
}

void Scheduler::retire_locked(Job& job, JobResult&& result, uint64_t end_ns,
                              bool reset_by_watchdog) {
  Context& ctx = *job.ctx;
  if (reset_by_watchdog && result.status != DRM_NPU_JOB_OK) {
    // The device stopped this job because the watchdog reset it: it is the guilty one.
    result.status = DRM_NPU_JOB_ERROR;
    if (result.fault.kind == DRM_NPU_FAULT_NONE) result.fault.kind = DRM_NPU_FAULT_WATCHDOG;
  }
  job.status = result.status;
  job.fault = result.fault;
  job.profile = std::move(result.profile);
  job.end_ns = end_ns;
  job.retired = true;
  ctx.jobs().in_flight.fetch_sub(1, std::memory_order_relaxed);
  retired_.fetch_add(1, std::memory_order_release);
  ctx.running = false;
  ctx.last_completed = std::max(ctx.last_completed, job.seqno);
  if (job.seqno > Context::kTimelineRetained) {
    if (auto old = ctx.find(job.seqno - Context::kTimelineRetained)) {
      old->profile.timeline = {};
      old->profile.irq_values = {};
      old->profile.race.hazards = {};
      old->races = {};
    }
  }

  if (job.log_hazards && job.profile.race.total > 0) log_hazards_locked(job);
  if (bo_waiters_ > 0) bo_cv_.notify_all();
  job.deps.clear();
  if (job.out_fence != nullptr) {
    job.out_fence->signal(job.status);
    // Jobs waiting for this fence may be ready now: the runner re-picks.
    queued_.fetch_add(1, std::memory_order_release);
    if (runner_idle_ && !runlists_empty()) work_cv_.notify_one();
  }
  if (job.status == DRM_NPU_JOB_OK) {
    ++counters_.jobs_completed;
  } else if (job.status == DRM_NPU_JOB_ABORTED) {
    ++counters_.jobs_aborted;
  } else if (job.status == DRM_NPU_JOB_ERROR) {
    ++counters_.jobs_faulted;
    if (job.fault.kind == DRM_NPU_FAULT_WATCHDOG) {
      ++ctx.reset_count;
      ++counters_.device_resets;
      for (Context* c : evented_) {
        if (c != &ctx) c->post_event();  // a reset, seen by every context that listens
      }
    }
    // A watchdog reset was already logged by the watchdog; device faults are routine for
    // fuzzing and SKIP_VALIDATION users, so they log at info.
    log().log(job.fault.kind == DRM_NPU_FAULT_WATCHDOG ? spdlog::level::warn : spdlog::level::info,
              "ctx {} seqno {}: {} fault on {} at command {}, address {:#x}; context banned",
              ctx.id(), job.seqno, isa::fault_kind_name(job.fault.kind),
              isa::engine_name(static_cast<uint8_t>(job.fault.engine)), job.fault.cmd_index,
              job.fault.address);
    ban_locked(ctx, job.fault, job.seqno);
  }
  if (ctx.waiters > 0) ctx.cv.notify_all();
}

void Scheduler::log_hazards_locked(const Job& job) {
  const RaceReport& r = job.profile.race;
  std::string first;
  if (!r.hazards.empty()) {
    const drm_npu_hazard& h = r.hazards.front();
    auto cmd = [](const drm_npu_hazard_cmd& c) {
      return fmt::format("command {} ({} on {})", c.cmd_index,
                         isa::opcode_name(static_cast<uint8_t>(c.opcode)),
                         isa::engine_name(static_cast<uint8_t>(c.engine)));
    };
    first = fmt::format(", the first: {} {} [{:#x}, {:#x}) between {} and {}",
                        isa::hazard_kind_name(h.kind),
                        h.space == DRM_NPU_HAZARD_SPACE_SRAM ? "sram" : "dram", h.begin, h.end,
                        cmd(h.first), cmd(h.second));
  }
  log().error("ctx {} seqno {}: racecheck: {} hazard{}{}", job.ctx->id(), job.seqno, r.total,
              r.total == 1 ? "" : "s", first);
}

void Scheduler::ban_locked(Context& ctx, const drm_npu_fault& fault, uint64_t seqno) {
  ctx.banned.store(true, std::memory_order_relaxed);
  ctx.last_fault = fault;
  ctx.fault_seqno = seqno;
  ctx.post_event();
  abort_queued_locked(ctx);
}

void Scheduler::abort_queued_locked(Context& ctx) {
  if (ctx.in_runlist) {
    auto& list = runlists_[ctx.priority()];
    list.erase(std::remove(list.begin(), list.end(), &ctx), list.end());
    ctx.in_runlist = false;
  }
  if (ctx.queue.empty()) return;
  const uint64_t now = monotonic_ns();
  for (auto& job : ctx.queue) {
    abort_job_locked(*job, {}, now);
    ctx.last_completed = std::max(ctx.last_completed, job->seqno);
  }
  queued_.fetch_add(1, std::memory_order_release);  // their fences signalled
  log().debug("ctx {}: aborted {} queued jobs", ctx.id(), ctx.queue.size());
  ctx.queue.clear();
  if (ctx.waiters > 0) ctx.cv.notify_all();
  if (bo_waiters_ > 0) bo_cv_.notify_all();
}

void Scheduler::account_locked(const JobProfile& p) {
  counters_.total_cycles += p.cycles;
  add_statistics(counters_, p);
}

}  // namespace npu::emu::kmd
