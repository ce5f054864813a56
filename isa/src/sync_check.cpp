// check_sync(): the static semaphore checks of validate() (sync_check.h). The deadlock check
// runs the program as the device would, without time: the command processor dispatches in
// order (stopping at a full engine queue or a FENCE that waits for the engines to drain),
// each engine executes its queue in order and stops at a SEM_WAIT its semaphore cannot pay.
// With one signaller and one waiter engine per semaphore the engines and the CP form a
// deterministic network (every blocking condition only becomes true with progress), so
// whatever order the real threads run in, the job finishes exactly when this run does.
#include "sync_check.h"

#include <algorithm>
#include <string>
#include <vector>

#include "npu/isa/opcodes.h"
#include "npu/isa/safe_points.h"
#include "payload_checker.h"

namespace npu::isa::detail {
namespace {

bool is_sem(const npu_cmd& c) {
  return c.hdr.opcode == NPU_OP_SEM_SIGNAL || c.hdr.opcode == NPU_OP_SEM_WAIT;
}

std::string sem_name(uint32_t sem) {
  return "semaphore " + std::to_string(sem);
}

/// The signals and waits of each semaphore, in buffer order.
struct SemUses {
  std::vector<uint32_t> signals, waits;
  uint64_t signalled = 0, waited = 0;  // sums of the counts
};

class SyncChecker {
 public:
  SyncChecker(std::span<const npu_cmd> cmds, const DeviceConfig& cfg)
      : cmds_(cmds), cfg_(cfg), sems_(cfg.num_semaphores) {
    for (uint32_t i = 0; i < cmds.size(); ++i) {
      const npu_cmd& c = cmds[i];
      if (!is_sem(c)) continue;
      SemUses& u = sems_[c.sem.sem];
      const bool signal = c.hdr.opcode == NPU_OP_SEM_SIGNAL;
      (signal ? u.signals : u.waits).push_back(i);
      (signal ? u.signalled : u.waited) += c.sem.count;
    }
  }

  /// A wait no signal can pay, whatever the order.
  Expected<void> check_totals() const {
    for (uint32_t s = 0; s < sems_.size(); ++s) {
      const SemUses& u = sems_[s];
      if (u.waits.empty()) continue;
      if (u.signals.empty()) {
        return error(u.waits.front(), "sem",
                     sem_name(s) + " is never signalled: this wait can never be satisfied");
      }
      uint64_t need = 0;
      for (uint32_t w : u.waits) {
        need += cmds_[w].sem.count;
        if (need > u.signalled) {
          return error(w, "count",
                       "the waits on " + sem_name(s) + " up to this one need " +
                           std::to_string(need) + ", but the buffer signals it only " +
                           std::to_string(u.signalled) + ": this wait can never be satisfied");
        }
      }
    }
    return ok();
  }

  /// A semaphore whose count exceeds the maximum even if every wait in the buffer consumed
  /// before the signal: the device faults (SEMAPHORE) whatever the timing.
  Expected<void> check_overflow() const {
    for (uint32_t s = 0; s < sems_.size(); ++s) {
      const SemUses& u = sems_[s];
      uint64_t signalled = 0;
      for (uint32_t i : u.signals) {
        signalled += cmds_[i].sem.count;
        if (signalled > u.waited + cfg_.semaphore_max) {
          return error(i, "count",
                       sem_name(s) + " overflows whatever the timing: signalled " +
                           std::to_string(signalled) + " up to here, the whole buffer waits for " +
                           std::to_string(u.waited) + ", and the device's maximum is " +
                           std::to_string(cfg_.semaphore_max));
        }
      }
    }
    return ok();
  }

  /// Every semaphore at 0 at each safe point (a FENCE with NPU_FENCE_FLAG_PREEMPT): the fence
  /// drains every engine, so a semaphore then holds the signals minus the waits of the
  /// commands before it, and the device may switch to another job there, which would find it
  /// with a count left over (and this job would resume with its semaphores reset).
  Expected<void> check_safe_points() const {
    std::vector<int64_t> value(sems_.size(), 0);
    size_t nonzero = 0;
    for (uint32_t i = 0; i < cmds_.size(); ++i) {
      const npu_cmd& c = cmds_[i];
      if (is_sem(c)) {
        int64_t& v = value[c.sem.sem];
        const bool was = v != 0;
        v += c.hdr.opcode == NPU_OP_SEM_SIGNAL ? int64_t{c.sem.count} : -int64_t{c.sem.count};
        nonzero += (v != 0) - was;
      } else if (is_safe_point(c) && nonzero > 0) {
        const auto s = static_cast<uint32_t>(
            std::find_if(value.begin(), value.end(), [](int64_t v) { return v != 0; }) -
            value.begin());
        return error(i, "flags",
                     "safe point with " + sem_name(s) + " at " + std::to_string(value[s]) +
                         " (the signals minus the waits of the commands before it): every "
                         "semaphore must be 0 at a safe point");
      }
    }
    return ok();
  }

  /// Runs the program without time; an error names the first blocked wait.
  Expected<void> check_progress() {
    depth_ = std::max<uint32_t>(1, cfg_.queue_depth);
    value_.assign(sems_.size(), 0);
    signals_done_.assign(sems_.size(), 0);
    for (bool moved = true; moved;) {
      moved = dispatch();
      for (uint8_t e = 1; e < NPU_NUM_ENGINES; ++e) moved = execute(e) || moved;
    }
    if (ended_ && drained()) return ok();
    return deadlock();
  }

 private:
  struct Engine {
    std::vector<uint32_t> queue;  // command indices dispatched to the engine, in order
    size_t next = 0;              // first one not executed
    bool blocked() const { return next < queue.size(); }
  };

  Error error(uint32_t index, const char* field, const std::string& what) const {
    return PayloadChecker(index, cmds_[index], cfg_).field_error(field, what);
  }

  bool drained() const {
    for (uint8_t e = 1; e < NPU_NUM_ENGINES; ++e) {
      if (eng_[e].blocked()) return false;
    }
    return true;
  }

  /// The command processor dispatches until a full queue, a FENCE that must wait, or END.
  bool dispatch() {
    bool moved = false;
    while (!ended_ && cp_ < cmds_.size()) {
      const npu_cmd& c = cmds_[cp_];
      const uint8_t e = c.hdr.engine;
      if (e != NPU_ENGINE_CP) {
        Engine& en = eng_[e];
        if (en.queue.size() - en.next >= depth_) break;
        en.queue.push_back(cp_);
      } else if (c.hdr.opcode == NPU_OP_FENCE) {
        if (!drained()) break;
      } else if (c.hdr.opcode == NPU_OP_END) {
        ended_ = true;
        break;
      }
      ++cp_;
      moved = true;
    }
    return moved;
  }

  /// Engine e executes its queue until a SEM_WAIT its semaphore cannot pay.
  bool execute(uint8_t e) {
    Engine& en = eng_[e];
    bool moved = false;
    while (en.blocked()) {
      const npu_cmd& c = cmds_[en.queue[en.next]];
      if (c.hdr.opcode == NPU_OP_SEM_WAIT) {
        if (value_[c.sem.sem] < c.sem.count) break;
        value_[c.sem.sem] -= c.sem.count;
      } else if (c.hdr.opcode == NPU_OP_SEM_SIGNAL) {
        value_[c.sem.sem] += c.sem.count;
        ++signals_done_[c.sem.sem];
      }
      ++en.next;
      moved = true;
    }
    return moved;
  }

  std::string where(uint32_t i) const {
    const npu_cmd& c = cmds_[i];
    std::string s = "command " + std::to_string(i) + " (" + opcode_name(c.hdr.opcode);
    if (is_sem(c)) s += " on " + sem_name(c.sem.sem);
    return s + ")";
  }

  /// Why the command processor stopped dispatching.
  std::string cp_stuck() const {
    const npu_cmd& c = cmds_[cp_];
    if (c.hdr.opcode == NPU_OP_FENCE) {
      return "the command processor waits at " + where(cp_) + " for every engine to drain";
    }
    return "the command processor waits at " + where(cp_) + " for room in the " +
           engine_name(c.hdr.engine) + " queue (queue_depth " + std::to_string(depth_) + ")";
  }

  /// Names the blocked wait with the lowest index and what keeps its signal from coming.
  Error deadlock() const {
    uint32_t w = UINT32_MAX;
    for (uint8_t e = 1; e < NPU_NUM_ENGINES; ++e) {
      if (eng_[e].blocked()) w = std::min(w, eng_[e].queue[eng_[e].next]);
    }
    if (w == UINT32_MAX) {  // unreachable: only a blocked wait stops the CP
      return error(cp_, "engine", "deadlock: " + cp_stuck());
    }
    const npu_cmd& c = cmds_[w];
    const uint32_t s = c.sem.sem;
    std::string what = "deadlock: " + sem_name(s) + " holds " + std::to_string(value_[s]) +
                       " of the " + std::to_string(c.sem.count) + " this wait needs; ";
    // check_totals() passed, so a signal of s has not run yet.
    if (signals_done_[s] >= sems_[s].signals.size()) return error(w, "sem", what);
    const uint32_t sig = sems_[s].signals[signals_done_[s]];
    what += "its next signal, " + where(sig) + " on " + engine_name(cmds_[sig].hdr.engine) + ", ";
    if (sig >= cp_) {
      what += "is never dispatched: " + cp_stuck();
    } else {
      const Engine& se = eng_[cmds_[sig].hdr.engine];
      const uint32_t at = se.queue[se.next];
      what += at == w ? "comes after this wait on the same engine"
                      : "waits behind " + where(at) + ", which is blocked too";
    }
    return error(w, "sem", what);
  }

  std::span<const npu_cmd> cmds_;
  const DeviceConfig& cfg_;
  std::vector<SemUses> sems_;
  // Progress run.
  size_t depth_ = 1;
  Engine eng_[NPU_NUM_ENGINES];
  uint32_t cp_ = 0;
  bool ended_ = false;
  std::vector<uint64_t> value_;
  std::vector<uint32_t> signals_done_;
};

}  // namespace

Expected<void> check_sync(std::span<const npu_cmd> cmds, const DeviceConfig& cfg) {
  if (std::none_of(cmds.begin(), cmds.end(), is_sem)) return ok();
  SyncChecker checker(cmds, cfg);
  NPU_TRY(checker.check_totals());
  NPU_TRY(checker.check_overflow());
  NPU_TRY(checker.check_safe_points());
  return checker.check_progress();
}

}  // namespace npu::isa::detail
