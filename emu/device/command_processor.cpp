// The command processor of a job on the engine threads. It runs on the thread that calls
// Device::run (no hand-off to a CP thread and back): it parses an unvalidated program command
// by command, dispatches engine commands to the engines' rings (engine_ring.h) in buffer
// order, runs its own commands (END, FENCE, MARKER, NOP) and stalls, in virtual time as on the
// host, on a full engine queue and at a FENCE. It waits for a queue slot, a FENCE or the end of
// the job by polling the engines' `finished` counters and parks on the device-wide `progress`
// word only when they do not move for a while; reset() raises the abort flag and bumps
// `progress`, so a waiting CP sees it. After the last dispatch it drains the engines and
// gathers the job's profile (finish); a faulted or hung job's account comes from a replay
// (replay_account.cpp).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "device_impl.h"
#include "npu/isa/timing.h"

namespace npu::emu {

void Device::Impl::run_job() {
  result = JobResult{};
  result.profile.timeline.mutate().assign(cmds.size(), drm_npu_cmd_profile{UINT32_MAX, 0, 0, 0, 0});
  uint64_t cp_clock = 0;
  uint64_t cp_busy = 0;
  uint32_t dispatched[NPU_NUM_ENGINES] = {};
  const uint64_t depth = std::max<uint32_t>(1, cfg.queue_depth);
  bool ended = false;

  for (uint32_t i = 0; i < cmds.size() && !ended && !job.aborted(); ++i) {
    const npu_cmd& c = cmds[i];
    cp_clock += cfg.cp_cycles_per_cmd;
    cp_busy += cfg.cp_cycles_per_cmd;
    const uint32_t e = c.hdr.engine;
    if (e >= NPU_NUM_ENGINES) {
      raise(DRM_NPU_FAULT_PARSE, NPU_ENGINE_CP, i, 0, cp_clock);
      break;
    }
    // An unvalidated program (SKIP_VALIDATION) is parsed here, command by command, so the
    // engines only ever see well-formed commands.
    if (!program->validated) {
      if (auto ok = isa::check_command(c, i, cfg); !ok) {
        device_log().debug("parse fault: {}", ok.error().message);
        raise(DRM_NPU_FAULT_PARSE, e, i, 0, cp_clock);
        break;
      }
    }
    if (e != NPU_ENGINE_CP) {
      Engine& eng = engines[e];
      if (dispatched[e] >= depth) {
        const uint64_t slot = dispatched[e] - depth;  // command that frees a queue entry
        cp_wait(
            [&] { return eng.finished.load(std::memory_order_acquire) > slot || job.aborted(); });
        if (job.aborted()) break;
        cp_clock = std::max(cp_clock, eng.end_times[slot]);
      }
      push(eng, {i, epoch, cp_clock});
      ++dispatched[e];
      continue;
    }
    switch (c.hdr.opcode) {
      case NPU_OP_END:
        record(i, NPU_ENGINE_CP, NPU_OP_END, cp_clock, cp_clock);
        ended = true;
        break;
      case NPU_OP_FENCE:
        if (!cp_fence(i, c, cp_clock, dispatched)) break;
        if (gate && gate->stop_at(i, cp_clock)) {  // preempted: every engine has drained
          result.resume_at = i + 1;
          ended = true;
        }
        break;
      case NPU_OP_MARKER:
      case NPU_OP_NOP: {
        const uint64_t cost = isa::command_cost(c, cfg).cycles;
        record(i, NPU_ENGINE_CP, c.hdr.opcode, cp_clock, cp_clock + cost);
        cp_clock += cost;
        cp_busy += cost;
        ++result.profile.commands[NPU_ENGINE_CP];
        break;
      }
      default:
        raise(DRM_NPU_FAULT_PARSE, NPU_ENGINE_CP, i, 0, cp_clock);
        break;
    }
  }
  if (!ended && !job.aborted())  // only reachable without validation
    raise(DRM_NPU_FAULT_PARSE, NPU_ENGINE_CP, static_cast<uint32_t>(cmds.size()) - 1, 0, cp_clock);
  cp_drain(dispatched);
  finish(cp_clock, cp_busy);
}

bool Device::Impl::cp_fence(uint32_t i, const npu_cmd& c, uint64_t& cp_clock,
                            const uint32_t (&dispatched)[NPU_NUM_ENGINES]) {
  const uint64_t start = cp_clock;
  cp_wait([&] {
    if (job.aborted()) return true;
    for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k)
      if (engines[k].finished.load(std::memory_order_acquire) < dispatched[k]) return false;
    return true;
  });
  if (job.aborted()) return false;
  for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) {
    const uint32_t n = engines[k].finished.load(std::memory_order_acquire);
    if (n > 0) cp_clock = std::max(cp_clock, engines[k].end_times[n - 1]);
  }
  if (racecheck) {  // every later command happens after everything before the fence
    for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) join(cp_vc, engines[k].vc);
    ++epoch;
  }
  if (c.hdr.flags & NPU_FENCE_FLAG_IRQ) result.profile.irq_values.push_back(c.fence.value);
  record(i, NPU_ENGINE_CP, NPU_OP_FENCE, start, cp_clock);
  ++result.profile.commands[NPU_ENGINE_CP];
  return true;
}

void Device::Impl::cp_drain(const uint32_t (&dispatched)[NPU_NUM_ENGINES]) {
  // Aborted jobs skip their commands, so every engine gets there.
  for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) {
    if (dispatched[k] == 0) {  // an engine the job never used needs no wake-up
      engines[k].done.store(true, std::memory_order_relaxed);
      continue;
    }
    push(engines[k], {kEndOfJob, 0, 0});
  }
  cp_wait([&] {
    for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k)
      if (!engines[k].done.load(std::memory_order_acquire)) return false;
    return true;
  });
}

void Device::Impl::finish(uint64_t cp_clock, uint64_t cp_busy) {
  JobProfile& p = result.profile;
  p.cycles = cp_clock;
  p.busy_cycles[NPU_ENGINE_CP] = cp_busy;
  for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) {
    const Engine& eng = engines[k];
    p.cycles = std::max(p.cycles, eng.clock);
    p.busy_cycles[k] = eng.stats.busy;
    p.commands[k] = eng.stats.commands;
    p.dma_bytes_in += eng.stats.dma_in;
    p.dma_bytes_out += eng.stats.dma_out;
    p.macs += eng.stats.macs;
    p.vector_elements += eng.stats.elements;
    p.semaphore_stall_cycles += eng.stats.stall;
  }
  std::erase_if(p.timeline.mutate(),
                [](const drm_npu_cmd_profile& e) { return e.cmd_index == UINT32_MAX; });
  result.fault = job.result_fault();
  // A faulted job ends at its first fault in virtual time. How far the command processor
  // and the other engines got on the host before they saw the abort is not part of the
  // model (and which of several faults the threads hit first is a race), so the fault and
  // the profile come from a replay of the device's checks (issue 14: 6 vs 134 cycles from
  // run to run). A watchdog or a reset has no cycle in the program: those keep the run's.
  if (job.fault_time()) account_fault();
  if (result.fault.kind == DRM_NPU_FAULT_WATCHDOG) blame_hang();
  result.status = result.fault.kind == DRM_NPU_FAULT_NONE ? DRM_NPU_JOB_OK : DRM_NPU_JOB_ERROR;
  if (racecheck) {
    const auto t0 = std::chrono::steady_clock::now();
    p.race = race.find_hazards(result.status != DRM_NPU_JOB_OK);
    device_log().debug(
        "racecheck: {} hazards among {} commands, pass {} us", p.race.total, cmds.size(),
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
            .count());
  }
}
}  // namespace npu::emu
