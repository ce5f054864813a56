// One data command (a DMA, a matrix or a vector command) as every way of running a job
// executes it: its operands checked against SRAM and the job's MMU (a failed check is the
// command's fault), then the engine kernel (run_command, cpu_isa.h) on SRAM and the DRAM
// operand's host bytes, polling the abort flag; afterwards the SRAM pages it wrote are noted
// (kern::SramVersions). Under the synchronization checker data commands take turns (data_mu).
// A serial job's commands (on run()'s thread or a host lane) go through execute(), which also
// skips a DMA load whose bytes SRAM already holds (load_memo.h) and runs a command the lanes
// renamed into the second lane's SRAM bank (sram_banks.h); the engine threads run every command.
// Safe from any thread that runs commands of the current job.
#include <algorithm>
#include <mutex>

#include "cpu_isa.h"
#include "device_impl.h"
#include "npu/emu/kernels.h"

namespace npu::emu {

std::optional<Device::Impl::OperandFault> Device::Impl::check_operands(
    const npu_cmd& c, std::vector<isa::Region>& regions, std::byte*& dram) const {
  regions.clear();
  dram = nullptr;
  if (!isa::command_regions(c, regions)) return OperandFault{DRM_NPU_FAULT_PARSE, 0};
  for (const isa::Region& r : regions) {
    if (r.space == isa::Space::Sram) {
      if (r.end > sram.size())
        return OperandFault{DRM_NPU_FAULT_SRAM_RANGE, std::max<uint64_t>(r.begin, sram.size())};
      continue;
    }
    dram = mmu->translate(r.begin, r.end - r.begin, r.access);
    if (!dram)
      return OperandFault{DRM_NPU_FAULT_MMU,
                          mmu->fault_address(r.begin, r.end - r.begin, r.access)};
  }
  return std::nullopt;
}

void Device::Impl::host_regions(std::span<const isa::Region> regions, const std::byte* dram,
                                std::vector<LaneRegion>& out) {
  for (const isa::Region& r : regions) {
    const bool write = (r.access & isa::kWrite) != 0;
    if (r.space == isa::Space::Sram) {
      out.push_back({r.begin, r.end, true, write});
    } else {  // its host bytes (the one DRAM operand, `dram`): aliases conflict too
      const auto host = reinterpret_cast<uintptr_t>(dram);
      out.push_back({host, host + (r.end - r.begin), false, write, r.pitch, r.width});
    }
  }
}

void Device::Impl::execute(const npu_cmd& c, std::byte* dram, std::span<const LaneRegion> regions) {
  if (load_memo.skip(c, regions, sram_versions)) return;
  const kern::SramVersionsScope scope(&sram_versions);
  // SRAM and the second lane's bank: a renamed command's operands may lie in either.
  run_command(c, sram_banked, dram, &job.abort_flag());
  uint64_t version = 0;  // of its last SRAM write: a load has one
  for (const LaneRegion& r : regions)
    if (r.sram && r.write) version = sram_versions.wrote(r.begin, r.end);
  load_memo.ran(c, regions, version);
}

bool Device::Impl::operands_or_raise(uint32_t engine, uint32_t index, const npu_cmd& c,
                                     uint64_t start, std::vector<isa::Region>& regions,
                                     std::byte*& dram) {
  const std::optional<OperandFault> f = check_operands(c, regions, dram);
  if (f) raise(f->kind, engine, index, f->address, start);
  return !f;
}

bool Device::Impl::run_data_command(uint32_t engine, uint32_t index, const npu_cmd& c,
                                    uint64_t start, std::vector<isa::Region>& regions) {
  std::byte* dram = nullptr;
  if (!operands_or_raise(engine, index, c, start, regions, dram)) return false;
  const kern::SramVersionsScope scope(&sram_versions);
  if (racecheck) {  // one data command at a time: a racy buffer races on no host memory
    std::lock_guard lk(data_mu);
    run_command(c, sram, dram, &job.abort_flag());
  } else {
    run_command(c, sram, dram, &job.abort_flag());
  }
  for (const isa::Region& r : regions)
    if (r.space == isa::Space::Sram && (r.access & isa::kWrite) != 0)
      sram_versions.wrote(r.begin, r.end);
  return true;
}

bool Device::Impl::run_serial_command(uint32_t engine, uint32_t index, const npu_cmd& c,
                                      uint64_t start, std::vector<isa::Region>& regions) {
  std::byte* dram = nullptr;
  if (!operands_or_raise(engine, index, c, start, regions, dram)) return false;
  serial_regions.clear();
  host_regions(regions, dram, serial_regions);
  execute(c, dram, serial_regions);
  return true;
}
}  // namespace npu::emu
