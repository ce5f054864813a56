// JobState: what the command processor and the engine threads share while one job runs:
// the counting semaphores (with the virtual time of every signal), the earliest fault, and
// the abort flag a fault or a reset raises. All methods are thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

#include "npu_accel.h"

namespace npu::emu {

class JobState {
 public:
  /// Prepares for a new job with `num_semaphores` semaphores of at most `sem_max` each.
  void begin(uint32_t num_semaphores, uint32_t sem_max);

  /// Raises a fault at virtual `time`; the job aborts. Of several faults the earliest in
  /// (time, command index) is kept.
  void fault(const drm_npu_fault& f, uint64_t time);

  /// Aborts the job as a watchdog reset would: the fault becomes a WATCHDOG fault on the
  /// command processor at command 0. Which command to blame is not decided here (which
  /// engines are blocked at the moment of the reset depends on the host threads' timing):
  /// the device names the hung wait after the job, from a replay (Device: blame_hang).
  void reset();

  bool aborted() const { return aborted_.load(std::memory_order_acquire); }

  /// The abort flag itself, for engine kernels to poll mid-command.
  const std::atomic<bool>& abort_flag() const { return aborted_; }

  /// The fault to report, or kind NONE.
  drm_npu_fault result_fault() const;

  /// The virtual cycle at which the reported fault was raised (the earliest fault in virtual
  /// time), or nullopt when there is none or a watchdog reset replaced it.
  std::optional<uint64_t> fault_time() const;

  /// SEM_SIGNAL at virtual time `time`. Returns false after raising a SEMAPHORE fault.
  bool signal(uint32_t engine, uint32_t cmd_index, uint32_t sem, uint32_t count, uint64_t time);

  /// SEM_WAIT: blocks until `count` is available or the job aborts. On success returns true,
  /// sets `time` to max(time, virtual time of the signal that completed the count) and
  /// `completed_by` to that signal's command index.
  bool wait(uint32_t engine, uint32_t cmd_index, uint32_t sem, uint32_t count, uint64_t& time,
            uint32_t& completed_by);

 private:
  struct Token {
    uint64_t time;
    uint32_t count;
    uint32_t cmd_index;  // the SEM_SIGNAL
  };
  struct Sem {
    uint64_t value = 0;
    std::deque<Token> tokens;  // signals not yet consumed, in signal order
  };

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Sem> sems_;
  uint32_t sem_max_ = 0;
  std::atomic<bool> aborted_{false};
  bool have_fault_ = false;
  drm_npu_fault fault_{};
  uint64_t fault_time_ = 0;
};

}  // namespace npu::emu
