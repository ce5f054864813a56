// The engine threads of a job that does not run serially (a job the replay finds faulting or
// hung, one under the synchronization checker or with a before_command hook, and every job of
// a device configured with "engine_threads"). One thread per engine, started with the first
// such job; each pops its command ring (engine_ring.h), runs the command at
// max(engine clock, dispatch time) in virtual time, publishes its end cycle and bumps the
// device's `progress` word so that a parked command processor wakes. An aborted job's
// remaining commands are popped and skipped, so the engine always reaches the end-of-job
// marker.
#include <algorithm>
#include <bit>

#include "device_impl.h"
#include "npu/isa/opcodes.h"
#include "npu/isa/timing.h"

namespace npu::emu {

void Device::Impl::start_engines() {
  if (engines_started) return;
  engines_started = true;
  const uint32_t capacity = std::bit_ceil(std::max<uint32_t>(1, cfg.queue_depth) + 2);
  for (uint32_t e = 1; e < NPU_NUM_ENGINES; ++e) {
    engines[e].id = e;
    engines[e].ring.resize(capacity);
    engines[e].mask = capacity - 1;
    engines[e].thread = std::thread([this, e] { engine_loop(engines[e]); });
  }
}

void Device::Impl::stop() {
  if (!engines_started) return;
  // No job runs (run() holds run_mu and the Device is being destroyed): the rings are empty.
  for (uint32_t e = 1; e < NPU_NUM_ENGINES; ++e) push(engines[e], {kShutdown, 0, 0});
  for (uint32_t e = 1; e < NPU_NUM_ENGINES; ++e) engines[e].thread.join();
}

void Device::Impl::prepare_engines(size_t count) {
  for (uint32_t k = 1; k < NPU_NUM_ENGINES; ++k) {
    Engine& eng = engines[k];
    eng.finished.store(0, std::memory_order_relaxed);
    if (eng.end_times.size() < count) eng.end_times.resize(count);
    eng.done.store(false, std::memory_order_relaxed);
    eng.clock = 0;
    eng.stats = {};
    eng.vc = {};
    eng.position = 0;
    eng.epoch = 0;
  }
  cp_vc = {};
  epoch = 0;
  if (racecheck) race.begin(count);
}

void Device::Impl::engine_loop(Engine& eng) {
  std::vector<isa::Region> regions;
  uint32_t head = 0;
  for (;;) {
    spin_then_wait(eng.tail, [&] { return eng.tail.load(std::memory_order_acquire) != head; });
    const QueueItem item = eng.ring[head & eng.mask];
    ++head;
    if (item.index == kShutdown) return;
    if (item.index == kEndOfJob) {
      eng.done.store(true, std::memory_order_release);
      bump_progress();
      continue;
    }
    uint64_t start = std::max(eng.clock, item.dispatch);
    uint64_t end = start;
    if (racecheck && item.epoch != eng.epoch) {  // first command after a FENCE
      join(eng.vc, cp_vc);
      eng.epoch = item.epoch;
    }
    if (before_command) before_command(eng.id, item.index + base);
    if (!job.aborted()) end = execute(eng, item.index, start, regions);
    if (racecheck) eng.vc[eng.id] = ++eng.position;
    eng.clock = end;
    const uint32_t n = eng.finished.load(std::memory_order_relaxed);
    eng.end_times[n] = end;
    eng.finished.store(n + 1, std::memory_order_release);
    bump_progress();
  }
}

uint64_t Device::Impl::execute(Engine& eng, uint32_t index, uint64_t start,
                               std::vector<isa::Region>& regions) {
  const npu_cmd& c = cmds[index];
  const uint8_t op = c.hdr.opcode;
  if (!isa::opcode_allows_engine(op, static_cast<uint8_t>(eng.id))) {
    raise(DRM_NPU_FAULT_PARSE, eng.id, index, 0, start);
    return start;
  }
  uint64_t end = start;
  if (op == NPU_OP_SEM_WAIT) {
    uint32_t signal = 0;
    if (job.wait(eng.id, index, c.sem.sem, c.sem.count, end, signal)) {
      if (racecheck) join(eng.vc, race.clock_of_signal(signal));
      eng.stats.stall += end - start;
      record(index, eng.id, op, start, end);
      ++eng.stats.commands;
    }
    return end;
  }
  const isa::CommandCost cost = isa::command_cost(c, cfg);
  end = start + cost.cycles;
  if (op == NPU_OP_SEM_SIGNAL) {
    if (racecheck) {  // the waiter learns everything up to and including this signal
      VectorClock sent = eng.vc;
      sent[eng.id] = eng.position + 1;
      race.signal_sent(index, sent);
    }
    if (!job.signal(eng.id, index, c.sem.sem, c.sem.count, end)) return start;
  } else if (isa::find_opcode(op)->data) {
    if (!run_data_command(eng.id, index, c, start, regions)) return start;
    if (job.aborted()) return start;  // cancelled mid-command: it did not complete
    if (racecheck) race.log(eng.id).record(index, op, eng.position, eng.vc, regions);
  }
  eng.stats.busy += cost.cycles;
  ++eng.stats.commands;
  eng.stats.macs += cost.macs;
  eng.stats.elements += cost.elements;
  if (eng.id == NPU_ENGINE_DMA_IN) eng.stats.dma_in += cost.bytes;
  if (eng.id == NPU_ENGINE_DMA_OUT) eng.stats.dma_out += cost.bytes;
  record(index, eng.id, op, start, end);
  return end;
}
}  // namespace npu::emu
