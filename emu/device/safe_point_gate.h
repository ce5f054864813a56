// SafePointGate: where a job run may stop, and the decision to stop there (preemption at safe
// points, ISA 1.2). The commands of one run() split into segments at the program's safe points
// (npu/isa/safe_points.h): segment k holds the commands after safe point k-1 up to and
// including safe point k. Execution asks the gate before a command starts; the first command
// of a segment not yet entered makes the gate ask JobOptions::yield once, with the virtual
// cycle at which the preceding safe point completes. If it answers true, that segment and every
// later one are skipped: the job stops at that safe point, once the commands before it are done.
// The serial device asks before every command: one command after another, a segment at a
// time; on the host lanes, several segments at a time (serial_runner.cpp), whose commands may
// overlap; the command processor of the engine threads asks at the FENCE.
//
// Why this is enough for the run to stop cleanly: a safe point is a FENCE, so every command of
// a segment starts at or after the end of every command of the segments before it; the serial
// causal order therefore holds all of segment k before any of segment k+1. On the lanes a
// command refused by the gate is not run, and every command that conflicts with it comes later
// in that order (a later segment, also refused); the commands of earlier segments all run.
// A safe point that END follows is not offered (nothing would be left to resume).
//
// Threading: admit() may be called from several host lanes at once (a lock guards the
// decision; a command of an admitted segment is one atomic load); the yield callback runs under
// that lock, on whichever thread crossed the safe point first. Lifetime: one per run().
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "npu_isa.h"

namespace npu::emu {

class SafePointGate {
 public:
  /// The safe points a run of `cmds` offers (indices relative to it, ascending): those that
  /// END does not follow.
  static std::vector<uint32_t> points_of(std::span<const npu_cmd> cmds);
  /// `points`: points_of() the commands of this run (indices below are relative to it; a
  /// device keeps them for a program it runs again); `yield` is asked at each safe point the
  /// run reaches, with that safe point's completion cycle.
  SafePointGate(std::vector<uint32_t> points, std::function<bool(uint64_t cycle)> yield);
  SafePointGate(const SafePointGate&) = delete;
  SafePointGate& operator=(const SafePointGate&) = delete;

  /// Whether the run has any safe point to stop at.
  bool empty() const { return points_.empty(); }

  /// Before command `index` starts: true to run it, false when the run stops at a safe point
  /// before it (then the command and every later segment's are skipped). `fence_end(p)` gives
  /// the completion cycle of safe point `p` (from the schedule).
  bool admit(uint32_t index, const std::function<uint64_t(uint32_t)>& fence_end);

  /// The command processor (engine threads) completed safe point `index` at `cycle`: true
  /// when the run stops there.
  bool stop_at(uint32_t index, uint64_t cycle);

  /// The safe point at which the run stopped (relative index), if it did.
  std::optional<uint32_t> stopped_at() const;

  /// The segment command `index` belongs to: 0 up to and including the first safe point.
  uint32_t segment(uint32_t index) const;

  /// The safe point (command index) that ends segment `seg`; nullopt for the last segment,
  /// which runs to the program's end.
  std::optional<uint32_t> segment_end(uint32_t seg) const {
    return seg < points_.size() ? std::optional<uint32_t>(points_[seg]) : std::nullopt;
  }

 private:
  std::vector<uint32_t> points_;  // safe points of the run not followed by END, ascending
  std::function<bool(uint64_t)> yield_;
  uint32_t admitted_ = 0;  // segments 0..admitted_ may run (under mu_)
  // The last command of segment admitted_ (UINT32_MAX: the last segment): a command at or
  // before it is admitted without a lock or a search, as every command asks.
  std::atomic<uint32_t> open_through_{UINT32_MAX};
  mutable std::mutex mu_;
  std::optional<uint32_t> stop_;  // the segment after which the run stops
};

}  // namespace npu::emu
