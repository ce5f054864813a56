// The synchronization checker of the device model (docs/racecheck.md): happens-before
// between engines through vector clocks, and the hazards between commands it does not order.
//
// Model. Each engine keeps a vector clock: entry k counts the commands of engine k known to
// have completed before the engine's current point. Edges: in-order execution on one engine;
// SEM_SIGNAL -> the SEM_WAIT whose count that signal completed (the waiter joins the clock the
// signaller had after the signal); FENCE -> every later command (the command processor joins
// every engine's clock once they drained, and an engine joins that clock when it starts a
// command dispatched after the fence). Nothing else orders engines: dispatch order, queue
// back-pressure and virtual time do not. Command p (engine a, position i on a) happens before
// q iff i < clock(q)[a].
//
// Every clock is a function of the program alone (the one-signaller/one-waiter rule fixes
// which signal completes which wait), so the recorded clocks, and the hazards found from them,
// never depend on how the host schedules the engine threads. The engines only record: each
// data command's position, clock and operand regions go to its engine's log, written by that
// engine's thread alone. find_hazards() runs once the job has drained, on one thread, over
// the four logs: for every two engines it walks the commands of one and, per command, the
// window of the other engine's commands that are unordered with it (both bounds move forward
// monotonically), and reports every overlapping pair with a write.
//
// Threading: an EngineLog belongs to its engine thread during the job; find_hazards() reads
// all of them after the job (the device's mutex orders the two). Lifetime: per device, reused
// by every job; begin() clears.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "npu/emu/device.h"
#include "npu/isa/regions.h"
#include "npu_isa.h"

namespace npu::emu {

/// Per engine (NPU_ENGINE_*): how many of that engine's commands are known to have completed.
using VectorClock = std::array<uint32_t, NPU_NUM_ENGINES>;

inline void join(VectorClock& into, const VectorClock& other) {
  for (size_t k = 0; k < into.size(); ++k) into[k] = std::max(into[k], other[k]);
}

/// What one engine executed under the checker.
class EngineLog {
 public:
  void clear() {
    entries_.clear();
    regions_.clear();
  }
  /// Records data command `index`, the engine's `position`-th command, started with `clock`,
  /// touching `regions`.
  void record(uint32_t index, uint8_t opcode, uint32_t position, const VectorClock& clock,
              const std::vector<isa::Region>& regions);

 private:
  friend class RaceChecker;
  struct Entry {
    uint32_t index;
    uint32_t position;
    VectorClock clock;
    uint32_t first_region;
    uint16_t num_regions;
    uint8_t opcode;
  };
  std::vector<Entry> entries_;  // in execution (= position) order
  std::vector<isa::Region> regions_;
};

class HazardSink;

class RaceChecker {
 public:
  /// Prepares for a job: clears the logs and sizes the table of signal clocks.
  void begin(size_t num_cmds);

  EngineLog& log(uint32_t engine) { return logs_[engine]; }

  /// SEM_SIGNAL `index` ran with the signaller's clock `clock`: the waiter it releases joins it.
  /// Called before the signal is published (JobState::signal), which orders it before the
  /// waiter's clock_of_signal().
  void signal_sent(uint32_t index, const VectorClock& clock) { signal_clocks_[index] = clock; }
  const VectorClock& clock_of_signal(uint32_t index) const { return signal_clocks_[index]; }

  /// The hazards of the logs, sorted by (first command, second command, kind, space), at most
  /// DRM_NPU_MAX_HAZARDS of them (report.total counts all). `partial` marks a job that did not
  /// complete.
  RaceReport find_hazards(bool partial) const;

 private:
  void check_engines(uint32_t a, uint32_t b, HazardSink& sink) const;

  EngineLog logs_[NPU_NUM_ENGINES];
  std::vector<VectorClock> signal_clocks_;  // by command index
};

}  // namespace npu::emu
