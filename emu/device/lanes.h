// Two host lanes for a serial job (issue 9): the data commands of a job, already in causal
// order, run on two host threads (the caller's and one lane thread per device) instead of one,
// each command after every earlier command it conflicts with (overlapping bytes of SRAM or of
// host DRAM, one of the two writing). Results are those of the serial order: two commands run
// at the same time only when neither touches what the other writes.
//
// Which lane runs a command: the one where it would finish first, by an estimate of host time
// per command (LaneCommand::cost), counting the wait for the other lane's command it depends
// on and the SRAM pages the other core holds (each page remembers the lane that last wrote it
// and the lane that last touched it: a read pulls modified lines over, a write invalidates
// the other core's copies). That keeps cache locality: the compiler double-buffers tiles
// through SRAM slots (load tile i into slot i % 2, compute, store), and a tile whose slot the
// other core wrote last pulls every byte of it across the cores (measured: as much as the
// arithmetic of a 16-channel convolution slice on it). A conv layer's tiles then settle into
// two chains, one per slot parity, each on its own lane.
//
// Threading: run() is called by one thread at a time (the device's run_mu). That thread plans
// the commands in order and is lane 0; lane 1 is the Lanes' thread. Each lane has a
// single-producer/single-consumer ring of planned commands, each with the number of the other
// lane's commands that must have finished first (the newest conflicting one and all before
// it). The caller plans ahead as far as the rings allow, so lane 1 has work while lane 0
// waits; each lane waits only for a command it conflicts with. Dependencies point to earlier
// commands and each lane runs its own in order, so the earliest unfinished command can always
// run. GEMMs on the lanes are not shared with the kernels' worker (emu/kernels/parallel.h):
// two cores, two threads. Lifetime: the lane thread starts
// with the first run() and is joined by the destructor.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <thread>
#include <vector>

namespace npu::emu {

/// One byte range a command touches: SRAM offsets, or host addresses of DRAM.
struct LaneRegion {
  uint64_t begin = 0, end = 0;
  bool sram = false;
  bool write = false;
};

/// One data command: its regions are regions[first, first + count) of run()'s region list;
/// cost estimates its host time in nanoseconds (the device's host_cost(): MACs, bytes, elements).
struct LaneCommand {
  uint32_t first = 0, count = 0;
  uint64_t cost = 0;
};

class Lanes {
 public:
  /// `sram_size`: the SRAM whose pages the lanes own.
  explicit Lanes(uint64_t sram_size);
  ~Lanes();
  Lanes(const Lanes&) = delete;
  Lanes& operator=(const Lanes&) = delete;

  /// Runs cmds[0..n) as described above, calling run(i, lane) on lane `lane`'s thread; run
  /// returns false to stop the job (then no further command starts). Returns the commands
  /// that ran to completion as flags (done[i] != 0), valid until the next run().
  std::span<const uint8_t> run(std::span<const LaneCommand> cmds,
                               std::span<const LaneRegion> regions,
                               const std::function<bool(uint32_t, int)>& run);

  /// Commands lane 1 ran since the Lanes were made (tests: did the second lane take part?).
  uint64_t lane1_commands() const { return lane1_total_.load(std::memory_order_relaxed); }

 private:
  static constexpr uint32_t kRing = 64;  // planned commands per lane (a power of two)
  static constexpr uint32_t kPageShift = 12;
  /// Estimated nanoseconds to pull one 4 KiB page from the other core's cache (64 lines; a
  /// streaming read measured 4 ns a line here).
  static constexpr uint64_t kRemotePageCost = 300;

  /// One lane's planned commands. Positions count from the Lanes' start (across runs): the
  /// planner stores entry and dep, then tail (release); the lane runs the entry once the other
  /// lane's `completed` reaches dep, then stores completed (release).
  struct Queue {
    uint32_t entry[kRing] = {};
    uint32_t dep[kRing] = {};
    uint64_t finish[kRing] = {};  // the planner's estimate of its end (planner only)
    alignas(64) std::atomic<uint32_t> tail{0};
    alignas(64) std::atomic<uint32_t> completed{0};
  };

  /// Where a command goes: its lane, the other lane's completed count it waits for (its
  /// newest planned, unfinished command that conflicts), and its estimated end.
  struct Choice {
    int lane = 0;
    uint32_t dep = 0;
    uint64_t finish = 0;
  };

  void loop();
  /// The lane where `c` would finish first (no side effects).
  Choice pick(const LaneCommand& c) const;
  /// Records that `c` runs as `ch` says: page owners and the lane's estimated end.
  void commit(const LaneCommand& c, const Choice& ch);
  /// The other lane's completed count `c` must wait for if it runs on `lane`.
  uint32_t dependency(const LaneCommand& c, int lane) const;
  void push(int lane, uint32_t entry, uint32_t dep, uint64_t finish);
  /// Runs lane `lane`'s entry at position `pos` (its dependency met); false: stop the job.
  void execute(int lane, uint32_t pos);

  // Per SRAM page: the lane that last wrote it, and that last read or wrote it (-1: none).
  std::vector<int8_t> writer_, toucher_;
  uint64_t free_at_[2] = {0, 0};  // estimated end of each lane's last planned command

  // The run, written by the caller before it publishes a ring entry.
  std::span<const LaneCommand> cmds_;
  std::span<const LaneRegion> regions_;
  const std::function<bool(uint32_t, int)>* run_ = nullptr;
  std::vector<uint8_t> done_;
  std::atomic<bool> stop_{false};  // a command asked to stop the job
  std::atomic<uint64_t> lane1_total_{0};

  Queue q_[2];
  std::thread thread_;  // started by the first run()
};

}  // namespace npu::emu
