// What a replay says of a job (isa::replay_to_fault(), npu/isa/schedule.h: the device's
// scheduling rules and checks, single-threaded, a function of the program and the address
// space alone). Three users: the serial runner takes its schedule and profile from it; a
// threaded job that faulted reports the replay's first fault in virtual time and the profile
// cut there (which fault the threads hit first is a race, issue 14); a job the watchdog reset
// is blamed on the replay's oldest wait that never completes (which engines sat in a wait at
// the reset is a race, issue 29). Called on run()'s thread after the job (or before, for a
// serial one); nothing is kept between calls.
#include <spdlog/spdlog.h>

#include "device_impl.h"
#include "npu/isa/timing.h"

namespace npu::emu {

/// What the device checks while it runs this job, for isa::replay_to_fault(): commands are
/// parsed when the program was not validated, DRAM operands go through the job's MMU.
isa::FaultModel Device::Impl::fault_model() const {
  isa::FaultModel model;
  model.check_commands = !program->validated;
  model.dram_fault = [this](const isa::Region& r) -> std::optional<uint64_t> {
    if (mmu->translate(r.begin, r.end - r.begin, r.access)) return std::nullopt;
    return mmu->fault_address(r.begin, r.end - r.begin, r.access);
  };
  return model;
}

void Device::Impl::add_schedule(JobProfile& p, const isa::Schedule& s) const {
  p.cycles = s.cycles;
  for (uint32_t k = 0; k < NPU_NUM_ENGINES; ++k) {
    p.busy_cycles[k] = s.busy[k];
    p.commands[k] = s.commands[k];
  }
  p.semaphore_stall_cycles = s.stall;
  add_timeline(p, s.timeline);
}

/// Appends a replayed timeline to `p` with what it implies: FENCE interrupts, MACs, vector
/// elements and DMA bytes (the statistics the engines gather when they run the commands).
void Device::Impl::add_timeline(JobProfile& p, std::span<const isa::CommandTime> timeline) const {
  ProfileTimeline::Entries& entries = p.timeline.mutate();
  entries.reserve(entries.size() + timeline.size());
  for (const isa::CommandTime& t : timeline) {
    entries.push_back({t.index, t.engine, t.opcode, t.start, t.end});
    const npu_cmd& c = cmds[t.index];
    if (t.engine == NPU_ENGINE_CP) {
      if (t.opcode == NPU_OP_FENCE && (c.hdr.flags & NPU_FENCE_FLAG_IRQ))
        p.irq_values.push_back(c.fence.value);
      continue;
    }
    if (t.opcode == NPU_OP_SEM_WAIT) continue;
    const isa::CommandCost cost = isa::command_cost(c, cfg);
    p.macs += cost.macs;
    p.vector_elements += cost.elements;
    if (t.engine == NPU_ENGINE_DMA_IN) p.dma_bytes_in += cost.bytes;
    if (t.engine == NPU_ENGINE_DMA_OUT) p.dma_bytes_out += cost.bytes;
  }
}

/// The fault and profile of a faulted job, from isa::replay_to_fault(): the first fault in
/// virtual time and the commands that completed before it. The data the engines wrote is
/// whatever they wrote before they stopped (a faulted job's outputs are undefined).
void Device::Impl::account_fault() {
  const isa::Schedule s = isa::replay_to_fault(cmds, cfg, fault_model());
  if (!s.fault) {  // cannot happen: every fault the device raises, the replay raises
    device_log().error("faulted job: the replay finds no fault (kept the run's profile)");
    return;
  }
  result.fault = *s.fault;
  JobProfile& p = result.profile;
  RaceReport hazards = std::move(p.race);
  p = JobProfile{};
  p.race = std::move(hazards);
  add_schedule(p, s);
}

/// Names the command a watchdog reset blames: in a job that hangs, the oldest wait that is
/// never satisfied. Which engines sit in a SEM_WAIT when the reset comes depends on the host
/// threads (two waiters racing for one semaphore's count, an engine that has not reached its
/// wait yet), so the blame comes from isa::replay_to_fault(), a function of the program alone:
/// the lowest command index the replay leaves unexecuted, which is a SEM_WAIT that its engine
/// reached (every earlier command ran, so the command processor dispatched it). A job the
/// replay finishes was only slow (or held by a before_command hook): the reset keeps
/// blaming the command processor, as a serial job's reset does.
void Device::Impl::blame_hang() {
  const isa::Schedule s = isa::replay_to_fault(cmds, cfg, fault_model());
  if (s.fault) return;  // a fault the threads did not reach before the reset
  uint32_t next = 0;    // the replay's timeline is by index: its first gap
  for (const isa::CommandTime& t : s.timeline) {
    if (t.index != next) break;
    if (t.engine == NPU_ENGINE_CP && t.opcode == NPU_OP_END) return;  // it finishes
    ++next;
  }
  if (next >= cmds.size() || cmds[next].hdr.opcode != NPU_OP_SEM_WAIT) return;
  result.fault.engine = cmds[next].hdr.engine;
  result.fault.cmd_index = next;
}
}  // namespace npu::emu
