// SramBanks: SRAM of its own for each host lane, so that the lanes can split a job's work
// (split_lanes, lane_schedule.h). A compiler double-buffers its tiles through a few SRAM
// slots; run on two lanes as they are, a load into a slot waits until every command that read
// the slot's last tile has ended, wherever it ran, and the lanes end up taking the tiles in
// turn. As a CPU renames registers, the device keeps two banks, bank 0 the SRAM itself and
// bank 1 host memory of the same size laid after it, and a command that writes a whole SRAM
// range on lane L writes it in bank L; a command that reads a range reads the bank its last
// writer wrote, whichever lane that was. After a run, the bytes whose last version lies in
// bank 1 are copied back to bank 0 (sram_copy_back), so the SRAM holds what the serial order
// leaves there, and every result is the serial order's, bit for bit.
//
// rename_sram() makes the stretch's commands and regions in the banks before the lanes'
// schedule is made: an operand's SRAM address moves by its bank's offset in a copy of the
// command, and its region with it, so the conflict graph (lane_schedule.h) sees the banks as
// distinct bytes and orders only what still overlaps. What it does not move: a write that may
// leave bytes of its range as they were (a strided or padded view, a batched matrix with gaps)
// and a write over bytes the command itself reads (an in-place activation); those write in
// place, in the bank the range's bytes are in. An operand whose bytes lie in both banks (a read
// over ranges the two lanes wrote) cannot move by one offset: then the stretch is not renamed
// and the lanes take the list schedule.
//
// Threading: plain functions of their arguments. Lifetime: a RenamedStretch is kept with the
// stretch's lane schedule (serial_plan.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "lanes.h"
#include "npu/isa/regions.h"
#include "npu_isa.h"

namespace npu::emu {

/// A stretch's commands with their SRAM operands in the lanes' banks.
struct RenamedStretch {
  std::vector<npu_cmd> cmds;        // the commands, SRAM addresses moved to their banks
  std::vector<LaneRegion> regions;  // their regions, SRAM ranges moved likewise
  std::vector<uint8_t> bank;        // per region: the bank of its SRAM range (0 for DRAM)
};

/// Bytes a run copies back to bank 0: [at, at + bytes) from bank 1.
struct SramCopy {
  uint64_t at = 0, bytes = 0;
  bool operator==(const SramCopy&) const = default;
};

/// Whether `cmd`'s SRAM write operand `r` (of command_regions(cmd)) writes every byte of its
/// range.
bool writes_every_byte(const npu_cmd& cmd, const isa::Region& r);

/// The address field of `cmd` named `field` (an SRAM operand's Region::field), or nullptr.
uint32_t* sram_address_field(npu_cmd& cmd, const char* field);

/// The commands `cmds` of a stretch (with their LaneCommands `lcmds` and regions `regions`, as
/// Device::Impl::host_regions made them from isa::command_regions) with the SRAM each writes
/// whole on lane lane_of[i] in bank lane_of[i], bank 1 at `stride` bytes past bank 0. nullopt
/// when an operand's bytes would lie in both banks, when nothing moves, or when a moved address
/// would not fit its 32-bit field.
std::optional<RenamedStretch> rename_sram(std::vector<npu_cmd> cmds,
                                          std::span<const LaneCommand> lcmds,
                                          std::span<const LaneRegion> regions, uint64_t stride,
                                          std::span<const uint8_t> lane_of);

/// What a run of renamed commands copies back to bank 0 afterwards: each SRAM range whose last
/// writer among the commands that ran (ran[i] != 0), in the commands' order, wrote it in bank
/// 1. `regions` are the commands' regions before renaming, `bank` rename_sram's.
std::vector<SramCopy> sram_copy_back(std::span<const LaneCommand> lcmds,
                                     std::span<const LaneRegion> regions,
                                     std::span<const uint8_t> bank, std::span<const uint8_t> ran);

}  // namespace npu::emu
