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
// The lanes split the work by weights instead when each lane can write SRAM of its own
// (sram_banks.h): split_lanes() keeps every matrix command that reads one load of weights on one
// lane, with the loads that feed it and the stores of what it wrote, so a lane packs the
// weights its own DMA loaded and reads the tiles its own loads brought in, and the lanes share
// only what a layer leaves in DRAM for the next. With the list schedule above, a slice's row
// bands alternated between the lanes through the compiler's two input slots: both lanes packed
// every slice's weights (ResNet-50 fp32: 623 packs per inference against 408 on one thread)
// and each tile crossed the cores, whose cache lines take 500-650 ns there and back on the
// two-vCPU guest this was measured on; the commands took 90-103 ms of CPU per inference on two
// lanes against 71 on one. A group (the matrix commands of one load of weights, or any other
// compute command alone) goes, in the commands' order, to the lane where its first command
// would start first; each lane then runs its commands in the commands' order
// (schedule_fixed_lanes), waiting for the other lane's only where they conflict after renaming.
// Both orders follow the commands' order and every wait points to an earlier command, so
// neither can wait on the other in a cycle.
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

/// `renamed_sram`: as if every SRAM write went to bytes of its own (sram_banks.h), so that an
/// SRAM write waits for nothing and only reads wait for its writer (DRAM conflicts stay whole).
LaneConflicts lane_conflicts(std::span<const LaneCommand> cmds, std::span<const LaneRegion> regions,
                             bool renamed_sram = false);

/// The list schedule of `cmds` on two lanes, by their costs (see above).
LaneSchedule schedule_lanes(std::span<const LaneCommand> cmds, std::span<const LaneRegion> regions);

/// The lane (0 or 1) of each command when the lanes split the work by weights (see above), by
/// the commands' roles, weights operands and costs, and their conflicts with SRAM renamed.
std::vector<uint8_t> split_lanes(std::span<const LaneCommand> cmds,
                                 std::span<const LaneRegion> regions);

/// The schedule that runs command i on lane lane_of[i], each lane in the commands' order, with
/// the waits that the conflicts of `regions` need (for split_lanes: the regions renamed into
/// the lanes' banks).
LaneSchedule schedule_fixed_lanes(std::span<const LaneCommand> cmds,
                                  std::span<const LaneRegion> regions,
                                  std::span<const uint8_t> lane_of);

}  // namespace npu::emu
