// The serial runner: a job on the thread that calls Device::run, the default (issue 9).
// Because every time is a function of the program alone, the host may execute the commands
// in any order that respects the edges between them. The schedule comes from
// isa::replay_to_fault() (the device's rules, single-threaded; kept per program,
// serial_plan.h), and the data commands execute one after another in order of (start, end,
// index), which puts every command after the commands it waits for. A small job costs no
// thread hand-off at all; a large one (1M cycles, 64 data commands) runs its data commands on
// two host lanes, each after the earlier commands it conflicts with (lane_dispatch.cpp,
// lanes.h); the matrix kernels may also share a GEMM with a worker thread
// (emu/kernels/parallel.h). A job the replay finds faulting or unable to finish runs on the
// engine threads instead (engine_threads.cpp), which raise the fault (or hang until the
// watchdog) as the device does; so do jobs under the synchronization checker or with a
// before_command hook, and every job of a device configured with "engine_threads"
// (Device::run decides).
#include <algorithm>
#include <chrono>
#include <functional>

#include <spdlog/spdlog.h>

#include "device_impl.h"
#include "npu/isa/opcodes.h"

namespace npu::emu {

std::function<uint64_t(uint32_t)> Device::Impl::fence_end(const isa::Schedule& s) {
  return [&s](uint32_t point) { return s.timeline[point].end; };
}

bool Device::Impl::is_data(const isa::CommandTime& t) {
  return t.engine != NPU_ENGINE_CP && isa::find_opcode(t.opcode)->data;
}

bool Device::Impl::dram_maps() const {
  for (const isa::DramAccess& d : program->dram)
    if (d.end > d.begin && mmu->translate(d.begin, d.end - d.begin, d.access) == nullptr)
      return false;
  return true;
}

std::shared_ptr<const SerialPlan> Device::Impl::serial_plan(bool& reused) {
  const uint64_t id = program->validated ? program->id : 0;
  reused = false;
  if (id != 0) {
    if (std::shared_ptr<const SerialPlan> kept = plans.find(id, base); kept && dram_maps()) {
      reused = true;
      return kept;
    }
  }

  auto plan = std::make_shared<SerialPlan>();
  plan->schedule = isa::replay_to_fault(cmds, cfg, fault_model());
  const isa::Schedule& s = plan->schedule;
  // Complete: no fault, and every command up to END ran (the timeline is by index).
  plan->runnable = !s.fault && !s.timeline.empty() && s.timeline.back().opcode == NPU_OP_END &&
                   s.timeline.back().engine == NPU_ENGINE_CP &&
                   s.timeline.size() == s.timeline.back().index + 1;
  if (!plan->runnable) return plan;

  // Causal order: a command that waits for another (same engine, a semaphore, a FENCE) starts
  // at or after its end, so (start, end, index) orders every such pair.
  std::vector<uint32_t>& order = plan->order;
  order.resize(s.timeline.size());
  for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const isa::CommandTime& x = s.timeline[a];
    const isa::CommandTime& y = s.timeline[b];
    if (x.start != y.start) return x.start < y.start;
    if (x.end != y.end) return x.end < y.end;
    return x.index < y.index;
  });

  for (const uint32_t k : order) plan->data_commands += is_data(s.timeline[k]);
  plan->host_ns.assign(s.timeline.size(), 0);
  add_schedule(plan->complete, s);
  if (id != 0) plans.keep(id, base, plan);
  return plan;
}

bool Device::Impl::run_serial() {
  bool reused = false;
  const std::shared_ptr<const SerialPlan> held = serial_plan(reused);
  if (!held->runnable) return false;
  const SerialPlan& plan = *held;
  const std::span<const uint32_t> order = plan.order;
  running_plan = &plan;

  result = JobResult{};
  result.plan_reused = reused;
  lanes_this_job = job_uses_lanes(plan);
  load_memo.clear();
  const auto t0 = std::chrono::steady_clock::now();
  bool on_lanes_ran = false;
  const isa::Schedule& s = plan.schedule;
  const size_t ran =
      gate ? run_segments(order, s, on_lanes_ran) : run_range(order, s, on_lanes_ran);

  const std::optional<uint32_t> stop = gate ? gate->stopped_at() : std::nullopt;
  // A part stopped at a safe point ran only some of the commands: its time says nothing
  // about which way runs the whole job faster.
  if (chosen_key && ran == order.size() && !job.aborted() && !stop) {
    const auto ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count());
    lane_choice.ran(*chosen_key, on_lanes_ran, ns);
    device_log().debug("job of {} cycles: {}, {:.2f} ms", s.cycles,
                       on_lanes_ran ? "two lanes" : "one thread", double(ns) / 1e6);
  }
  running_plan = nullptr;
  serial_profile(plan, ran);
  result.on_lanes = on_lanes_ran;
  result.loads_skipped = load_memo.skipped_loads();
  result.load_bytes_skipped = load_memo.skipped_bytes();
  if (result.loads_skipped != 0)
    device_log().debug("{} DMA loads ({} bytes) not copied: SRAM held their bytes",
                       result.loads_skipped, result.load_bytes_skipped);
  result.fault = job.result_fault();
  result.status = result.fault.kind == DRM_NPU_FAULT_NONE ? DRM_NPU_JOB_OK : DRM_NPU_JOB_ERROR;
  return true;
}

size_t Device::Impl::run_range(std::span<const uint32_t> range, const isa::Schedule& s,
                               bool& on_lanes_ran) {
  if (const std::optional<size_t> on_lanes = run_on_lanes(range, s)) {
    on_lanes_ran = true;
    return *on_lanes;
  }
  size_t n = 0;
  std::vector<isa::Region> regions;
  const auto point_end = fence_end(s);
  for (const uint32_t k : range) {
    if (job.aborted()) break;
    const isa::CommandTime& t = s.timeline[k];
    if (gate && !gate->admit(t.index, point_end)) break;  // the job stops at a safe point
    if (is_data(t)) {
      run_serial_command(t.engine, t.index, cmds[t.index], t.start, regions);
      if (job.aborted()) break;  // cancelled mid-command: it did not complete
    }
    ++n;
  }
  return n;
}

size_t Device::Impl::run_segments(std::span<const uint32_t> order, const isa::Schedule& s,
                                  bool& on_lanes_ran) {
  // Whole safe-point segments (the commands up to and including a safe point) at a time: a
  // safe point is a FENCE, so each segment is a contiguous stretch of the causal order. On the
  // lanes a stretch holds segments until kLanesStretch commands: both lanes wait for each
  // other at a stretch's end (ResNet-18 fp32: 40 segments of about 100 data commands; in one
  // run's measured times its schedules took 15% more than half its work, 5% as one stretch).
  // Every command asks the gate before it starts (run_range, run_on_lanes), so the first
  // command of a segment that the gate refuses stops the job at the safe point before it, once
  // the commands before it are done, and none after it has started.
  size_t ran = 0;
  for (size_t from = 0; from < order.size() && !job.aborted();) {
    size_t to = from;
    do {  // a whole segment: up to its safe point, the last command of it in the causal order
      const std::optional<uint32_t> end =
          gate->segment_end(gate->segment(s.timeline[order[to]].index));
      while (to < order.size() && (!end || s.timeline[order[to]].index != *end)) ++to;
      to += to < order.size();
    } while (lanes_this_job && to < order.size() && to - from < kLanesStretch);
    const size_t n = run_range(order.subspan(from, to - from), s, on_lanes_ran);
    ran += n;
    if (n != to - from) break;
    from = to;
  }
  return ran;
}

void Device::Impl::serial_profile(const SerialPlan& plan, size_t ran) {
  JobProfile& p = result.profile;
  const isa::Schedule& s = plan.schedule;
  const std::optional<uint32_t> stop = gate ? gate->stopped_at() : std::nullopt;
  if (ran == plan.order.size() && !stop) {
    p = plan.complete;
    return;
  }
  // Stopped at a safe point, or reset mid-job: the profile of the commands that ran.
  std::vector<isa::CommandTime> kept;
  if (stop && !job.aborted()) {  // the commands up to the safe point, which ends the part
    kept.assign(s.timeline.begin(), s.timeline.begin() + *stop + 1);
    p.cycles = s.timeline[*stop].end;
    result.resume_at = *stop + 1;
  } else {
    p.cycles = ran ? s.timeline[plan.order[ran - 1]].end : 0;
    for (size_t r = 0; r < ran; ++r) kept.push_back(s.timeline[plan.order[r]]);
    std::sort(kept.begin(), kept.end(),
              [](const auto& a, const auto& b) { return a.index < b.index; });
  }
  p.busy_cycles[NPU_ENGINE_CP] = uint64_t{cfg.cp_cycles_per_cmd} * kept.size();
  for (const isa::CommandTime& t : kept) {
    if (t.opcode == NPU_OP_SEM_WAIT) {
      p.semaphore_stall_cycles += t.end - t.start;
    } else if (t.opcode != NPU_OP_FENCE) {
      p.busy_cycles[t.engine] += t.end - t.start;
    }
    if (t.engine != NPU_ENGINE_CP || t.opcode != NPU_OP_END) ++p.commands[t.engine];
  }
  add_timeline(p, kept);
}

}  // namespace npu::emu
