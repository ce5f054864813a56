// SerialPlan: what running a job serially needs that follows from its program (from the command
// it starts at) and the device config alone: the virtual-time schedule of isa::replay_to_fault(),
// the causal order the data commands execute in, and the profile of a run of every command. A
// model submits the same command buffers for every inference, and the kernel driver hands the
// device the same program for the same bytes (isa::Program::id, emu/kmd/program_cache.h), so
// SerialPlans keeps the plans of the programs run last and a job of a known program skips the
// replay and the sort (8,872 commands per ResNet-18 int8 inference: 6% of its host time).
//
// The replay also checks each DRAM operand against the job's Mmu, which is the job's, not the
// program's: a kept plan is used only when every DRAM range of the program maps in this job's
// Mmu with its access (then that replay's answer is the first one's); otherwise the plan is
// made again and finds the fault.
//
// Threading: a plan is immutable once made and read by run()'s thread and the lanes; SerialPlans
// is used under the device's run lock only. Lifetime: shared; a run holds its plan while it uses
// it, and SerialPlans keeps at most kEntries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "lane_schedule.h"
#include "npu/emu/device.h"
#include "npu/isa/schedule.h"
#include "sram_banks.h"

namespace npu::emu {

/// The lanes' schedule of one stretch of a plan's order, kept for the stretch's next runs.
struct KeptLaneSchedule {
  std::vector<LaneRegion> regions;  // what it was made for (DRAM host addresses vary by job)
  LaneSchedule schedule;
  uint32_t runs = 0;      // runs since it was made
  bool measured = false;  // made from measured host times (else from estimates)
  // The lanes' other inputs as the stretch's last built run made them (lane_dispatch.cpp),
  // with the Mmu mappings they were built for and the stretch's length (0: none kept yet). A
  // run whose job maps the same BOs the same way uses them and `regions` as they are, instead
  // of checking and translating every command's operands again: ResNet-50's 9,921 data
  // commands took 1.6 ms per inference on one thread while the other lane waited.
  std::vector<Mapping> mappings;
  size_t stretch = 0;
  std::vector<LaneCommand> cmds;
  std::vector<uint32_t> timeline;
  std::vector<std::byte*> dram;
  // The commands and regions renamed into the SRAM banks (sram_banks.h) for the schedule the
  // lanes run; nullopt: they run as they are.
  std::optional<RenamedStretch> renamed;
};

struct SerialPlan {
  /// The replay reached END with every command before it and no fault: the job can run serially.
  bool runnable = false;
  isa::Schedule schedule;       // timeline by command index (from the run's first command)
  std::vector<uint32_t> order;  // timeline entries in causal order: (start, end, index)
  size_t data_commands = 0;     // of them, data commands (the ones the lanes run)
  JobProfile complete;          // the profile of a run of every command

  // What the lanes learn from one run of the plan for the next (lane_dispatch.cpp; used under
  // the device's run lock, host_ns also by the lane that runs the command): each data
  // command's host time when it last ran on the lanes in nanoseconds (by timeline entry, 0
  // before), and the schedules of the stretches of the order run on the lanes, by the
  // stretch's first timeline entry.
  mutable std::vector<uint32_t> host_ns;
  mutable std::unordered_map<uint32_t, KeptLaneSchedule> lane_schedules;
};

class SerialPlans {
 public:
  static constexpr size_t kEntries = 8;

  /// The plan kept for program `id` run from command `begin`, or nullptr.
  std::shared_ptr<const SerialPlan> find(uint64_t id, uint32_t begin);
  /// Keeps `plan` (most recently used first; the oldest goes beyond kEntries).
  void keep(uint64_t id, uint32_t begin, std::shared_ptr<const SerialPlan> plan);

 private:
  struct Entry {
    uint64_t id;
    uint32_t begin;
    std::shared_ptr<const SerialPlan> plan;
  };
  std::list<Entry> entries_;
};

}  // namespace npu::emu
