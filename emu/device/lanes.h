// Two host lanes for a serial job (issue 9): the data commands of a job, already in causal
// order, run on two host threads (the caller's and one lane thread per device) instead of one,
// each command after every earlier command it conflicts with (overlapping bytes of SRAM or of
// host DRAM, one of the two writing). Results are those of the serial order: two commands run
// at the same time only when neither touches what the other writes.
//
// Which lane runs a command, and when: a list schedule made before the lanes start
// (lane_schedule.h), from an estimate of each command's host time (LaneCommand::cost; the
// device passes what the command took when it last ran). Each lane runs its commands in the
// schedule's order and waits, before each, for the number of the other lane's commands that
// covers every one it conflicts with.
//
// A run whose lanes wait on each other longer than its whole schedule should take (with 2 ms
// of slack) drains: lane 1 starts no further command and the caller runs every command not yet
// done in the serial order, which is correct whatever ran before (a command done on a lane
// ran after every earlier command it conflicts with, so none of those is left). On a loaded
// host a lane's thread can sit behind other work for a scheduler tick at each hand-off, and a
// ResNet-50 run took 250-550 ms instead of 40-55 (the device's watchdog ends a job at 2 s).
//
// Threading: run() is called by one thread at a time (the device's run_mu). That thread is
// lane 0; lane 1 is the Lanes' thread. Each lane has a single-producer/single-consumer ring of
// its scheduled commands, each with the number of the other lane's commands that must have
// finished first; the caller fills both rings as they have room and runs lane 0's. GEMMs on
// the lanes are not shared with the kernels' worker (emu/kernels/parallel.h): two cores, two
// threads. Lifetime: the lane thread starts with the first run() and is joined by the
// destructor.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <thread>
#include <vector>

#include "npu/emu/wait_word.h"

namespace npu::emu {

/// One byte range a command touches: SRAM offsets, or host addresses of DRAM. pitch != 0: only
/// rows of `width` bytes every `pitch` bytes from begin (a DMA's strided DRAM side: a slice of
/// channels), so that two commands whose rows never meet do not conflict.
struct LaneRegion {
  uint64_t begin = 0, end = 0;
  bool sram = false;
  bool write = false;
  uint32_t pitch = 0, width = 0;
  bool operator==(const LaneRegion&) const = default;
};

/// What a command is to the lanes' planner (split_lanes, lane_schedule.h).
enum class LaneRole : uint8_t { Compute, Load, Store };

/// One data command: its regions are regions[first, first + count) of run()'s region list;
/// cost estimates its host time in nanoseconds (what it took when it last ran, or the device's
/// host_cost(): MACs, bytes, elements). role: a DMA load or store, or a compute command;
/// weights: which of its regions (counted from first) reads a matrix command's weights, or -1.
struct LaneCommand {
  uint32_t first = 0, count = 0;
  uint64_t cost = 0;
  LaneRole role = LaneRole::Compute;
  int32_t weights = -1;
};

struct LaneSchedule;

class Lanes {
 public:
  Lanes() = default;
  ~Lanes();
  Lanes(const Lanes&) = delete;
  Lanes& operator=(const Lanes&) = delete;

  /// Runs cmds[0..n) as described above, calling run(i, lane) on lane `lane`'s thread; run
  /// returns false to stop the job (then no further command starts). `schedule`: made by
  /// schedule_lanes() for these commands and regions, or nullptr to make it here. Returns the
  /// commands that ran to completion as flags (done[i] != 0), valid until the next run().
  std::span<const uint8_t> run(std::span<const LaneCommand> cmds,
                               std::span<const LaneRegion> regions,
                               const std::function<bool(uint32_t, int)>& run,
                               const LaneSchedule* schedule = nullptr);

  /// Commands lane 1 ran since the Lanes were made (tests: did the second lane take part?).
  uint64_t lane1_commands() const { return lane1_total_.load(std::memory_order_relaxed); }
  /// Runs that fell back to one thread since the Lanes were made (tests).
  uint64_t drained_runs() const { return drained_total_.load(std::memory_order_relaxed); }

 private:
  static constexpr uint32_t kRing = 64;  // scheduled commands per lane (a power of two)

  /// One lane's scheduled commands. Positions count from the Lanes' start (across runs): the
  /// caller stores entry and dep, then advances tail (a read-modify-write, wait_word.h); the
  /// lane runs the entry once the other lane's `completed` reaches dep (or the job stopped or
  /// drained), then advances completed.
  struct Queue {
    uint32_t entry[kRing] = {};
    uint32_t dep[kRing] = {};
    alignas(64) WaitWord tail;
    alignas(64) WaitWord completed;
  };

  void loop();
  void push(int lane, uint32_t entry, uint32_t dep);
  /// Runs lane `lane`'s entry at position `pos` (its dependency met); false: stop the job.
  void execute(int lane, uint32_t pos);
  /// Whether lane `lane` may start an entry that waits for `dep` of the other lane's.
  bool may_start(int lane, uint32_t dep) const;
  /// Polls ready() (never parks) until it holds or the run drains, adding the time to the
  /// run's waits; drains the run when those pass drain_after_ns_.
  template <class Ready>
  void wait_in_run(Ready&& ready);
  /// After a drain: lane 1 hands back its entries (running none it has not begun), then the
  /// caller runs every command not done, in the serial order.
  void finish_alone(std::span<const LaneCommand> cmds);

  // The run, written by the caller before it publishes a ring entry.
  const std::function<bool(uint32_t, int)>* run_ = nullptr;
  std::vector<uint8_t> done_;
  std::atomic<bool> stop_{false};  // a command asked to stop the job
  // The lanes waited on each other longer than the whole run should take (a lane's thread
  // behind other work on a loaded host): lane 1 starts nothing more, the caller runs the rest.
  std::atomic<bool> drain_{false};
  uint64_t drain_after_ns_ = 0;  // the schedule's makespan plus kDrainSlack
  std::atomic<uint64_t> drained_total_{0};
  // Written while the lanes run, each on a cache line of its own: stop_ and drain_ above are
  // read before every command by both lanes, and lane 1 counted every command it ran on their
  // line (EfficientNet-B0 int8, which runs many small commands: 0.965 of the time).
  alignas(64) std::atomic<uint64_t> waited_ns_{0};  // both lanes' waits in this run
  alignas(64) std::atomic<uint64_t> lane1_total_{0};

  Queue q_[2];
  std::thread thread_;  // started by the first run()
};

}  // namespace npu::emu
