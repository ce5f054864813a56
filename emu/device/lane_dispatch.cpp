// Lane dispatch: whether a serial job's data commands run on two host lanes (lanes.h) instead
// of one after another, and the planning that hands them over. A job qualifies by size
// (kLanesMinCycles, kLanesMinCommands), then by measurement (LaneChoice remembers which way
// ran a job of its size faster); NPU_EMU_LANES and NPU_EMU_THREADS force either way. Each
// command's operand regions (SRAM ranges and its DRAM operand's host bytes) tell the lanes
// what it conflicts with, and an estimate of its host time (host_cost) where to run it.
// Called on run()'s thread only (run_mu held).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "cpu_isa.h"
#include "device_impl.h"
#include "lane_schedule.h"
#include "npu/emu/kernels.h"
#include "npu/isa/timing.h"
#include "sram_banks.h"

namespace npu::emu {

namespace {

/// Minimum modeled cycles and data commands of a job run on two host lanes: below them the
/// lane thread's wake-up and the hazard bookkeeping cost more than the second core gives (a
/// Fashion-MNIST image is 8,743 cycles, the GPT-style decoder 61k, ResNet-18 7.9M).
constexpr uint64_t kLanesMinCycles = 1'000'000;
constexpr size_t kLanesMinCommands = 64;

/// Runs of a stretch of commands between two makings of its lane schedule from measured times.
constexpr uint32_t kRescheduleEvery = 32;

/// Whether the stretch's schedule is to be made again on this run (lane_schedule()).
bool reschedule_due(const KeptLaneSchedule& kept) {
  return kept.runs >= (kept.measured ? kRescheduleEvery : 2);
}

/// An estimate of a data command's host time in nanoseconds, for the lanes' planner: the
/// kernels' rates on this class of machine (a GEMM tile at kern::matrix_macs_per_ns of its
/// dtype, e.g. fp32 about 40 GMAC/s and int8 on AMX about 160; a DMA copy about 20 GB/s, a
/// vector element about 0.3 ns) plus a fixed cost per command.
uint64_t host_cost(const npu_cmd& cmd, const isa::CommandCost& c) {
  uint64_t rate = 40;
  if (cmd.hdr.opcode == NPU_OP_CONV2D) rate = kern::matrix_macs_per_ns(cmd.conv2d.in_dtype);
  if (cmd.hdr.opcode == NPU_OP_MATMUL) rate = kern::matrix_macs_per_ns(cmd.matmul.a_dtype);
  return c.macs / rate + c.bytes / 20 + c.elements * 3 / 10 + 200;
}

/// How serial jobs may use two host lanes: 0 never (NPU_EMU_LANES=0, NPU_EMU_THREADS=1, one
/// CPU), 1 always (NPU_EMU_LANES=1, tests), 2 by size and then by measurement (LaneChoice).
int lanes_mode() {
  static const int mode = [] {
    const char* threads = std::getenv("NPU_EMU_THREADS");
    if (threads != nullptr && std::string_view(threads) == "1") return 0;
    const char* lanes = std::getenv("NPU_EMU_LANES");
    if (lanes != nullptr && std::string_view(lanes) == "0") return 0;
    if (lanes != nullptr && std::string_view(lanes) == "1") return 1;
    return std::thread::hardware_concurrency() >= 2 ? 2 : 0;
  }();
  return mode;
}

/// Whether a serial job of `cycles` and `data` data commands may run on two host lanes.
bool use_lanes(uint64_t cycles, size_t data) {
  const int mode = lanes_mode();
  return mode == 1 || (mode == 2 && cycles >= kLanesMinCycles && data >= kLanesMinCommands);
}

}  // namespace

bool Device::Impl::job_uses_lanes(const SerialPlan& plan) {
  chosen_key.reset();
  if (host_lanes == HostLanes::Off) return false;
  if (host_lanes == HostLanes::On) return true;
  const isa::Schedule& s = plan.schedule;
  if (!use_lanes(s.cycles, plan.data_commands)) return false;
  if (lanes_mode() == 2) {  // large enough: the way that ran it faster before
    chosen_key = s.cycles * 1000003 + cmds.size();
    return lane_choice.lanes(*chosen_key);
  }
  return true;
}

/// Runs the data commands of `order` on two host lanes (lanes.h) when the job uses them
/// (job_uses_lanes) and every command passes its SRAM and MMU checks; returns how many commands
/// of `order` ran, counted as the serial loop counts them. nullopt: nothing ran (the serial
/// loop then runs the stretch, and raises the fault if there is one).
std::optional<size_t> Device::Impl::run_on_lanes(std::span<const uint32_t> order,
                                                 const isa::Schedule& s) {
  if (!lanes_this_job || running_plan == nullptr || order.empty()) return std::nullopt;
  // The inputs the stretch's last run built, when this job's Mmu maps what that one's did and
  // its schedule is not to be made again (which takes the costs measured since).
  const KeptLaneSchedule& kept = running_plan->lane_schedules[order.front()];
  const bool reuse =
      kept.stretch == order.size() && !reschedule_due(kept) && kept.mappings == mmu->mappings();
  if (!reuse) {
    lane_cmds.clear();
    lane_regions.clear();
    lane_timeline.clear();
    lane_dram.clear();
    std::vector<isa::Region> regions;
    for (const uint32_t k : order) {
      const isa::CommandTime& t = s.timeline[k];
      if (!is_data(t)) continue;
      const npu_cmd& c = cmds[t.index];
      std::byte* dram = nullptr;
      if (check_operands(c, regions, dram)) return std::nullopt;  // the serial loop faults
      LaneCommand lc;
      lc.first = static_cast<uint32_t>(lane_regions.size());
      const uint32_t took = running_plan->host_ns[k];
      lc.cost = took != 0 ? took : host_cost(c, isa::command_cost(c, cfg));
      host_regions(regions, dram, lane_regions);
      lc.count = static_cast<uint32_t>(lane_regions.size()) - lc.first;
      lc.role = c.hdr.opcode == NPU_OP_DMA_LOAD    ? LaneRole::Load
                : c.hdr.opcode == NPU_OP_DMA_STORE ? LaneRole::Store
                                                   : LaneRole::Compute;
      const std::string_view weights = c.hdr.opcode == NPU_OP_CONV2D   ? "w_addr"
                                       : c.hdr.opcode == NPU_OP_MATMUL ? "b_addr"
                                                                       : "";
      for (uint32_t r = 0; r < regions.size() && !weights.empty(); ++r)
        if (regions[r].field == weights) lc.weights = static_cast<int32_t>(r);
      lane_cmds.push_back(lc);
      lane_timeline.push_back(k);
      lane_dram.push_back(dram);
    }
  }
  uint32_t* host_ns = nullptr;  // where this run measures each command's host time
  const LaneSchedule& schedule =
      lane_schedule(*running_plan, order.front(), order.size(), reuse, host_ns);
  // The kept inputs are this run's now (lane_schedule keeps what this run built).
  const std::optional<RenamedStretch>& renamed = kept.renamed;
  const std::span<const LaneCommand> in_cmds = kept.cmds;
  const std::span<const LaneRegion> in_regions = renamed ? renamed->regions : kept.regions;
  const std::span<const uint32_t> in_timeline = kept.timeline;
  const std::span<std::byte* const> in_dram = kept.dram;
  if (!lanes) lanes = std::make_unique<Lanes>();
  // A command of a segment the gate refuses (the job stops at the safe point before it) does
  // not run: it is refused, and so are the later segments' commands, which are all that
  // conflict with it.
  lane_refused.assign(in_cmds.size(), 0);
  const std::function<uint64_t(uint32_t)> point_end = fence_end(s);
  const uint64_t drained = lanes->drained_runs();
  const std::span<const uint8_t> done = lanes->run(
      in_cmds, in_regions,
      [&](uint32_t i, int /*lane*/) {
        const isa::CommandTime& t = s.timeline[in_timeline[i]];
        if (gate && !gate->admit(t.index, point_end)) {
          lane_refused[i] = 1;
          return true;
        }
        const LaneCommand& lc = in_cmds[i];
        const auto start = host_ns != nullptr ? std::chrono::steady_clock::now()
                                              : std::chrono::steady_clock::time_point{};
        execute(renamed ? renamed->cmds[i] : cmds[t.index], in_dram[i],
                in_regions.subspan(lc.first, lc.count));
        if (host_ns != nullptr) {
          const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
          host_ns[in_timeline[i]] = static_cast<uint32_t>(std::clamp<int64_t>(ns, 1, UINT32_MAX));
        }
        return !job.aborted();
      },
      &schedule);
  if (renamed) copy_back_banks(kept, done);
  // A run that drained (the lanes waited on each other far beyond its schedule: this host is
  // holding a lane's thread back) ended on one thread; so does the rest of the job, whose time
  // then tells LaneChoice which way to take next.
  if (lanes->drained_runs() != drained) {
    lanes_this_job = false;
    device_log().debug(
        "lanes drained in a stretch of {} data commands: the rest of the job on one thread",
        in_cmds.size());
  }
  size_t ran = 0, i = 0;
  for (const uint32_t k : order) {
    const isa::CommandTime& t = s.timeline[k];
    if (is_data(t)) {
      if (done[i] == 0 || lane_refused[i] != 0) break;
      ++i;
    } else if (gate && !gate->admit(t.index, point_end)) {
      break;  // a segment of control commands only, which no lane asked for
    }
    ++ran;
  }
  return ran;
}

const LaneSchedule& Device::Impl::lane_schedule(const SerialPlan& plan, uint32_t first,
                                                size_t stretch, bool reused, uint32_t*& host_ns) {
  host_ns = nullptr;
  // Kept from the stretch's last run while its regions are the same. The first is made from
  // the estimates; the second run (warm) measures each command's host time and the third runs
  // a schedule made from those; then every kRescheduleEvery runs the times are measured again
  // and the schedule made again, to follow the machine.
  KeptLaneSchedule& kept = plan.lane_schedules[first];
  if (!reused) {  // lane_cmds and the rest were built for this run: kept for the next ones
    const bool changed = kept.regions != lane_regions;
    if (changed || reschedule_due(kept)) {
      kept.measured = !changed;
      // Split by weights with SRAM of each lane's own when the device has the banks and the
      // stretch can be renamed (sram_banks.h), else the list schedule (lane_schedule.h).
      kept.renamed.reset();
      if (sram_bank_count == 2) {
        const std::vector<uint8_t> lane_of = split_lanes(lane_cmds, lane_regions);
        std::vector<npu_cmd> stretch_cmds(lane_timeline.size());
        for (size_t i = 0; i < lane_timeline.size(); ++i)
          stretch_cmds[i] = cmds[plan.schedule.timeline[lane_timeline[i]].index];
        kept.renamed = rename_sram(std::move(stretch_cmds), lane_cmds, lane_regions,
                                   sram_bank_stride, lane_of);
        if (kept.renamed)
          kept.schedule = schedule_fixed_lanes(lane_cmds, kept.renamed->regions, lane_of);
      }
      if (!kept.renamed) kept.schedule = schedule_lanes(lane_cmds, lane_regions);
      kept.regions = lane_regions;
      kept.runs = 0;
    }
    kept.mappings = mmu->mappings();
    kept.stretch = stretch;
    kept.cmds = lane_cmds;
    kept.timeline = lane_timeline;
    kept.dram = lane_dram;
  }
  if (kept.runs + 1 == (kept.measured ? kRescheduleEvery : 2)) host_ns = plan.host_ns.data();
  ++kept.runs;
  return kept.schedule;
}

void Device::Impl::copy_back_banks(const KeptLaneSchedule& kept, std::span<const uint8_t> done) {
  lane_ran.resize(done.size());
  for (size_t i = 0; i < done.size(); ++i) lane_ran[i] = done[i] != 0 && lane_refused[i] == 0;
  for (const SramCopy& c : sram_copy_back(kept.cmds, kept.regions, kept.renamed->bank, lane_ran)) {
    std::memcpy(sram.data() + c.at, sram_banked.data() + sram_bank_stride + c.at, c.bytes);
    sram_versions.wrote(c.at, c.at + c.bytes);
  }
}

}  // namespace npu::emu
