// Device: the façade of the device model (npu/emu/device.h). run() sets up a job and picks
// how the host executes it — serially on this thread (serial_runner.cpp) unless it needs the
// engine threads (engine_threads.cpp, command_processor.cpp) — then turns the result's command
// indices back into the program's. reset() aborts the running job from any thread;
// scramble_sram() stands in for another tenant between two parts of a preempted job. Which
// file holds which part of Device::Impl, and the model's virtual time: device_impl.h.
#include "npu/emu/device.h"

#include <spdlog/spdlog.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string_view>

#include "device_impl.h"
#include "npu/log.h"

namespace npu::emu {

spdlog::logger& device_log() {
  static spdlog::logger& l = npu::logger("npu-device", LogLevel::kError);  // see kmd::log()
  return l;
}

namespace {

constexpr uint64_t kHuge = uint64_t{2} << 20;

/// The SRAM banks (sram_banks.h): two, the SRAM and one for the second host lane, up to 64 MiB
/// of SRAM (above it the lanes take their list schedule); one with NPU_EMU_LANE_SPLIT=0, which
/// gives the lanes their list schedule whatever the size (lane_schedule.h).
unsigned sram_banks_for(uint64_t size) {
  static const bool split = [] {
    const char* env = std::getenv("NPU_EMU_LANE_SPLIT");
    return env == nullptr || std::string_view(env) != "0";
  }();
  return split && size <= (uint64_t{64} << 20) ? 2u : 1u;
}

/// Memory for the SRAM: `banks` banks of `stride` bytes, the first `zeroed` bytes zero (the
/// second bank's bytes are always written before they are read), 2 MiB-aligned and advised to
/// transparent huge pages, so that the kernels and the DMA, which sweep it constantly, take one
/// TLB entry per 2 MiB instead of one per 4 KiB (the default 2 MiB SRAM is one page).
std::unique_ptr<std::byte, FreeDeleter> sram_bytes(uint64_t stride, unsigned banks,
                                                   uint64_t zeroed) {
  const uint64_t bytes = stride * banks;
  void* p = std::aligned_alloc(kHuge, bytes);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  (void)::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: a refusal keeps 4 KiB pages
#endif
  std::memset(p, 0, zeroed);
  return std::unique_ptr<std::byte, FreeDeleter>(static_cast<std::byte*>(p));
}

}  // namespace

Device::Impl::Impl(const isa::DeviceConfig& c)
    : cfg(c),
      sram_bank_count(sram_banks_for(c.sram_size)),
      sram_bank_stride(std::max<uint64_t>((c.sram_size + kHuge - 1) / kHuge * kHuge, kHuge)),
      sram_memory(sram_bytes(sram_bank_stride, sram_bank_count, c.sram_size)),
      sram(sram_memory.get(), c.sram_size),
      sram_banked(sram_memory.get(), sram_bank_stride * (sram_bank_count - 1) + c.sram_size) {}

std::vector<uint32_t> Device::Impl::safe_points_of_run() {
  if (program->id == 0) return SafePointGate::points_of(cmds);
  if (gate_points.id != program->id || gate_points.base != base) {
    gate_points.points = SafePointGate::points_of(cmds);
    gate_points.id = program->id;
    gate_points.base = base;
  }
  return gate_points.points;
}

void Device::Impl::shift_indices() {
  if (base == 0) return;
  for (drm_npu_cmd_profile& e : result.profile.timeline.mutate()) e.cmd_index += base;
  for (drm_npu_hazard& h : result.profile.race.hazards) {
    h.first.cmd_index += base;
    h.second.cmd_index += base;
  }
  if (result.fault.kind != DRM_NPU_FAULT_NONE) result.fault.cmd_index += base;
  if (result.resume_at != 0) result.resume_at += base;
}

Device::Device(isa::DeviceConfig cfg) : cfg_(std::move(cfg)), impl_(std::make_unique<Impl>(cfg_)) {}

Device::~Device() {
  impl_->stop();
}

JobResult Device::run(const isa::Program& program, const Mmu& mmu, const JobOptions& options) {
  std::lock_guard run_lk(impl_->run_mu);
  Impl& d = *impl_;
  if (program.cmds.empty() || options.begin >= program.cmds.size()) {
    JobResult r;
    r.status = DRM_NPU_JOB_ERROR;
    r.fault = {DRM_NPU_FAULT_PARSE, NPU_ENGINE_CP, 0, 0, 0};
    return r;
  }
  d.job.begin(cfg_.num_semaphores, cfg_.semaphore_max);
  d.racecheck = options.racecheck;
  d.host_lanes = options.host_lanes;
  d.before_command = options.before_command;
  d.program = &program;
  d.base = options.begin;
  d.cmds = std::span<const npu_cmd>(program.cmds).subspan(options.begin);
  if (options.yield)
    d.gate = std::make_unique<SafePointGate>(d.safe_points_of_run(), options.yield);
  if (d.gate && d.gate->empty()) d.gate.reset();
  d.mmu = &mmu;
  {
    std::lock_guard lk(d.mu);
    d.running = true;
  }
  // Serial unless the job needs the engine threads: the checker's vector clocks and the
  // before_command hook are per engine thread.
  const bool serial = !cfg_.engine_threads && !options.racecheck && !options.before_command;
  if (!serial || !d.run_serial()) {
    d.start_engines();
    d.prepare_engines(d.cmds.size());
    d.run_job();  // the command processor runs on this thread
  }
  {
    std::lock_guard lk(d.mu);
    d.running = false;
  }
  d.shift_indices();
  d.program = nullptr;
  d.cmds = {};
  d.gate.reset();
  d.mmu = nullptr;
  d.before_command = nullptr;
  return std::move(d.result);
}

void Device::scramble_sram(uint64_t seed) {
  std::lock_guard run_lk(impl_->run_mu);
  Impl& d = *impl_;
  // A fixed xorshift stream: enough to make any read of SRAM left over from before a safe
  // point produce a different result, deterministic for a given seed.
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i + 8 <= d.sram.size(); i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(d.sram.data() + i, &x, 8);
  }
  d.sram_versions.wrote(0, d.sram.size());
}

void Device::reset() {
  Impl& d = *impl_;
  std::lock_guard lk(d.mu);
  if (!d.running) return;  // only the running job is affected
  device_log().warn("reset while a job is running");
  d.job.reset();
  d.bump_progress();  // a CP parked on engine progress sees the abort
}

}  // namespace npu::emu
