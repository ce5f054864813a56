// Hazards: what the synchronization checker (docs/racecheck.md) found in a job, as libnpu
// reads them (Job::hazards(), QUERY JOB_HAZARDS) and as reports name them.
//
// A hazard is two commands of different engines that touch the same bytes, at least one of
// them writing, with no chain of semaphore signal -> wait edges, FENCEs and in-order execution
// leading from one to the other: on silicon (or under other timing) either may run first. The
// kind reads from the command earlier in the buffer: RAW (it writes what the later one
// reads), WAR (it reads what the later one writes), WAW (both write).
//
// Text, one line per hazard (describe_hazard()):
//   RAW sram [0x0, 0x40): command 0 (dma_load on dma_in, marker 10) writes, command 2
//   (activation on vector, marker 40) reads; no semaphore or fence orders them
// A CommandLabeler adds the parenthesized label after the engine: the MARKER the command
// follows in a raw buffer (marker_labels()), the layer of a compiled model (npu::runtime).
//
// Threading/lifetime: plain values and pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "npu_accel.h"
#include "npu_isa.h"

namespace npu {

enum class HazardKind : uint32_t {
  kRaw = DRM_NPU_HAZARD_RAW,
  kWar = DRM_NPU_HAZARD_WAR,
  kWaw = DRM_NPU_HAZARD_WAW,
};

enum class MemorySpace : uint32_t {
  kSram = DRM_NPU_HAZARD_SPACE_SRAM,  // offsets into the SRAM
  kDram = DRM_NPU_HAZARD_SPACE_DRAM,  // device virtual addresses
};

/// "RAW", "WAR", "WAW" ("?" for an unknown value).
const char* hazard_kind_name(HazardKind kind);
/// "sram", "dram" ("?" for an unknown value).
const char* memory_space_name(MemorySpace space);

/// One command of a hazard.
struct HazardCommand {
  uint32_t cmd_index = 0;
  uint16_t engine = 0;  // NPU_ENGINE_*
  uint16_t opcode = 0;  // NPU_OP_*
  bool operator==(const HazardCommand&) const = default;
};

struct Hazard {
  HazardKind kind = HazardKind::kRaw;
  MemorySpace space = MemorySpace::kSram;
  uint64_t begin = 0, end = 0;  // the bytes both touch (hull of the overlaps)
  HazardCommand first;          // earlier in the buffer
  HazardCommand second;         // later in the buffer
  bool operator==(const Hazard&) const = default;
};

/// The checker's result for one job.
struct HazardReport {
  bool checked = false;  // the job ran under the checker (SUBMIT with racecheck)
  bool partial = false;  // the job did not complete: only the commands that ran were checked
  uint64_t total = 0;    // hazards found; above hazards.size() when the kernel cut the list
  std::vector<Hazard> hazards;  // sorted by (first, second command, kind, space)
};

/// Converts the ABI struct.
Hazard hazard_from_abi(const drm_npu_hazard& h);
drm_npu_hazard hazard_to_abi(const Hazard& h);

/// Names a command in hazard reports; "" for no label.
using CommandLabeler = std::function<std::string(uint32_t cmd_index)>;

/// Labels a command by the last MARKER at or before it in `commands` ("marker 10"); "" when
/// none. The labeler keeps what it needs (not `commands`).
CommandLabeler marker_labels(std::span<const npu_cmd> commands);

/// The one-line description (see the header comment).
std::string describe_hazard(const Hazard& hazard, const CommandLabeler& label = {});

/// "(dma_load on dma_in, marker 10)": a hazard command as describe_hazard() names it.
std::string describe_hazard_command(const HazardCommand& c, const CommandLabeler& label = {});

}  // namespace npu
