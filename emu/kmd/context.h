// Context: an execution context (a job queue with a priority) in one open file. Sequence
// numbers start at 1 and grow by one per SUBMIT. The results of the last kRetained jobs are
// kept in a ring indexed by seqno; a job further back is forgotten (WAIT and QUERY
// JOB_PROFILE / JOB_HAZARDS answer ENOENT). The ring also bounds the jobs in flight: a SUBMIT
// whose slot still holds an unretired job fails with ENOMEM (queue full). Per-command
// timelines and hazard lists, which can be large, are kept only for the last
// kTimelineRetained jobs; older jobs keep their summary statistics and hazard counts.
//
// Threading: id and priority are immutable; everything else is guarded by the scheduler lock
// (`banned` is also readable without it, as an early-out for SUBMIT).
// Lifetime: shared by the file's context table and by callers inside an ioctl; a context is
// drained (queued jobs aborted, running job waited for) before the file lets go of it.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "job.h"
#include "npu_accel.h"
#include "quota.h"

namespace npu::emu::kmd {

class Context {
 public:
  static constexpr uint64_t kRetained = 1024;
  static constexpr uint64_t kTimelineRetained = 64;

  /// `jobs`: the owning file's count of jobs in flight (quota.h), shared by its contexts.
  Context(uint32_t id, uint32_t priority, const void* owner = nullptr,
          std::shared_ptr<JobAccount> jobs = std::make_shared<JobAccount>(UINT32_MAX))
      : id_(id), priority_(priority), owner_(owner), jobs_(std::move(jobs)) {}
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  uint32_t id() const { return id_; }
  uint32_t priority() const { return priority_; }
  /// The file the context belongs to (identity only: the race checker tells a job of this
  /// file from another file's).
  const void* owner() const { return owner_; }
  /// The owning file's jobs in flight and their limit (in_flight: scheduler lock to change).
  JobAccount& jobs() const { return *jobs_; }

  // --- everything below: scheduler lock held ---

  /// The job with this seqno if it was handed out and is still retained, else nullptr.
  std::shared_ptr<Job> find(uint64_t seqno) const;
  /// True when the next seqno's ring slot is free (its previous job retired).
  bool can_accept() const;
  /// Assigns the next seqno to `job` and stores it in the ring.
  void install(const std::shared_ptr<Job>& job);
  /// Snapshot for QUERY CONTEXT_STATE.
  drm_npu_context_state state() const;

  std::atomic<bool> banned{false};
  bool destroyed = false;
  bool running = false;     // one of its jobs is on the device
  bool in_runlist = false;  // listed in the scheduler's run list of its priority
  uint32_t reset_count = 0;
  uint64_t last_submitted = 0;
  uint64_t last_completed = 0;
  uint64_t fault_seqno = 0;
  drm_npu_fault last_fault{};
  std::deque<std::shared_ptr<Job>> queue;  // FIFO of queued jobs
  uint32_t waiters = 0;                    // threads blocked on cv
  std::condition_variable cv;              // notified when one of its jobs retires
  // CTX_EVENTS (API 1.3): eventfds (the driver's copies) counting faults and device resets.
  std::vector<int> event_fds;
  /// Adds one event to every event descriptor of the context (under the scheduler lock).
  void post_event();

 private:
  const uint32_t id_;
  const uint32_t priority_;
  const void* const owner_;
  const std::shared_ptr<JobAccount> jobs_;
  std::array<std::shared_ptr<Job>, kRetained> ring_;
};

}  // namespace npu::emu::kmd
