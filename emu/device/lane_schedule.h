// LaneSchedule: which host lane runs each data command of a serial job, and in what order
// (lanes.h), made before the lanes start: a list schedule of the commands' conflict graph.
//
// Two commands conflict when they touch overlapping bytes of SRAM or of host DRAM and one of
// them writes; a command may start once every earlier command it conflicts with has ended
// (then the bytes end as the serial order leaves them). lane_conflicts() finds, for each
// command, those earlier commands exactly: per byte range the last writer and the readers
// since, kept in an interval map. schedule_lanes() then takes the commands by decreasing
// bottom level (a command's estimated host time, LaneCommand::cost, plus the longest chain of
// conflicts after it; the classic list-scheduling priority) and appends each to the lane where
// it would end first, after that lane's last command and its conflicts, a conflict on the other
// lane adding a hand-off cost (so chains stay on one lane when that costs little). Taking
// commands in the job's causal order instead (the modeled start times, which interleave the DMA
// and compute engines) left the lanes waiting on each other: ResNet-50 fp32's conflict graph
// with the times one run measured, simulated per safe-point segment, takes 105 ms on two lanes
// in causal order and 68 ms by bottom level, against 67 ms of work per lane and 64 ms of
// critical path.
//
// The schedule holds for the lanes whatever the real times turn out to be: each lane runs its
// commands in its order and waits, before each, for the number of the other lane's commands
// that includes every one it conflicts with. Every wait points to a command placed earlier, and
// each lane's order is the placing order, so the two orders never wait on each other in a cycle.
//
// Threading: plain functions of their arguments. A LaneSchedule is immutable once made.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lanes.h"

namespace npu::emu {

struct LaneSchedule {
  /// Per lane, the commands (indices of the run) it runs, in this order; and before each, how
  /// many of the other lane's commands of this run must have completed.
  std::vector<uint32_t> order[2];
  std::vector<uint32_t> wait[2];
  /// When the simulation ended, in the commands' cost units (nanoseconds).
  uint64_t makespan = 0;
};

/// For each command i, the earlier commands it conflicts with: preds[first[i], first[i + 1]),
/// ascending.
struct LaneConflicts {
  std::vector<uint32_t> first;
  std::vector<uint32_t> preds;
};

LaneConflicts lane_conflicts(std::span<const LaneCommand> cmds,
                             std::span<const LaneRegion> regions);

/// The list schedule of `cmds` on two lanes, by their costs (see above).
LaneSchedule schedule_lanes(std::span<const LaneCommand> cmds, std::span<const LaneRegion> regions);

}  // namespace npu::emu
