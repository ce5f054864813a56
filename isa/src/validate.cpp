// validate(): the one command-buffer checker (docs/isa.md, "Validity rules"). Checks the
// header, then each command's opcode, engine and flags against the opcode table and its
// payload through the table's CHECK function (payload_checks.cpp), then the rules that span
// the buffer (END last, one signaller and one waiter engine per semaphore, SRAM bounds, and
// the semaphore checks of sync_check.cpp: no wait that can never be paid, no deadlock, no
// certain overflow).
#include "npu/isa/validate.h"

#include <bit>
#include <cstring>
#include <string>

#include "common.h"
#include "npu/isa/opcodes.h"
#include "npu_accel.h"
#include "payload_checker.h"
#include "sync_check.h"

namespace npu::isa {
namespace {

using detail::hex;
using detail::PayloadChecker;

std::string feature_names(uint64_t bits) {
  std::string s;
  auto add = [&](const char* n) { s += s.empty() ? n : std::string(", ") + n; };
  if (bits & NPU_FEATURE_INT8) add("int8");
  if (bits & NPU_FEATURE_FP32) add("fp32");
  if (bits & NPU_FEATURE_TRANSCENDENTAL) add("transcendental");
  if (bits & NPU_FEATURE_FP16) add("fp16");
  if (bits & ~uint64_t{NPU_FEATURES_ALL}) add(hex(bits & ~uint64_t{NPU_FEATURES_ALL}).c_str());
  return s.empty() ? "none" : s;
}

/// The engines of a mask as an error message names them: "any engine", "matrix",
/// "dma_in, dma_out, matrix or vector".
std::string engines_text(uint8_t mask) {
  if (mask == (1u << NPU_NUM_ENGINES) - 1) return "any engine";
  std::string s;
  int left = std::popcount(mask);
  for (uint8_t e = 0; e < NPU_NUM_ENGINES; ++e) {
    if (!(mask & (1u << e))) continue;
    --left;
    s += engine_name(e);
    if (left > 1) s += ", ";
    if (left == 1) s += " or ";
  }
  return s;
}

std::string engine_label(uint8_t e) {
  return e < NPU_NUM_ENGINES ? engine_name(e) : "engine " + std::to_string(e);
}

/// Checks one command's structure: opcode, engine, header, flags, payload and features (a
/// command using fp16/bf16 also needs NPU_FEATURE_FP16 in the buffer's `declared` features).
Expected<void> check_structure(const PayloadChecker& k, const npu_cmd& cmd, uint64_t declared) {
  const auto& h = cmd.hdr;
  const OpcodeInfo* op = find_opcode(h.opcode);
  if (!op) return k.field_error("opcode", "unknown opcode " + hex(h.opcode));
  if (!op->allows(h.engine)) {
    return k.field_error(
        "engine", "expected " + engines_text(op->engines) + ", got " + engine_label(h.engine));
  }
  if (h.reserved != 0) return k.field_error("hdr.reserved", "must be zero, got " + hex(h.reserved));
  if (h.flags & ~op->flags) {
    return k.field_error("flags", "undefined flag bits " + hex(h.flags & ~op->flags));
  }
  NPU_TRY(detail::check_payload(k, cmd));
  const uint64_t need = command_features(cmd);
  if (need & ~k.cfg().features) {
    return k.error("requires feature " + feature_names(need & ~k.cfg().features) +
                   ", which the device does not implement");
  }
  if ((need & NPU_FEATURE_FP16) && !(declared & NPU_FEATURE_FP16)) {
    return k.error(
        "uses fp16/bf16, but the buffer's required_features does not declare fp16 (ISA 1.1)");
  }
  return ok();
}

struct SemUse {
  int32_t signal_cmd = -1;
  uint8_t signal_engine = 0;
  int32_t wait_cmd = -1;
  uint8_t wait_engine = 0;
};

/// Computes the command's regions into `regions` and checks its SRAM ranges.
Expected<void> check_regions(const PayloadChecker& checker, const npu_cmd& cmd,
                             const DeviceConfig& cfg, std::vector<Region>& regions) {
  regions.clear();
  if (auto r = command_regions(cmd, regions); !r) return checker.error(r.error().message);
  for (const Region& reg : regions) {
    if (reg.space == Space::Sram && reg.end > cfg.sram_size) {
      return checker.field_error(reg.field, "sram range [" + std::to_string(reg.begin) + ", " +
                                                std::to_string(reg.end) + ") outside " +
                                                std::to_string(cfg.sram_size) + "-byte sram");
    }
  }
  return ok();
}

}  // namespace

Expected<void> check_command(const npu_cmd& cmd, uint32_t index, const DeviceConfig& cfg) {
  PayloadChecker checker(index, cmd, cfg);
  // One command alone has no buffer header: the declaration rule is the buffer's.
  NPU_TRY(check_structure(checker, cmd, ~uint64_t{0}));
  std::vector<Region> regions;
  if (auto r = command_regions(cmd, regions); !r) return checker.error(r.error().message);
  return ok();
}

std::vector<npu_cmd> copy_commands(const std::byte* bytes, size_t count) {
  std::vector<npu_cmd> cmds;
  cmds.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    npu_cmd c;
    std::memcpy(&c, bytes + i * NPU_CMD_SIZE, NPU_CMD_SIZE);
    cmds.push_back(c);
  }
  return cmds;
}

Expected<Program> validate(std::span<const std::byte> buffer, const DeviceConfig& cfg) {
  auto buf_error = [](const std::string& what) {
    return make_error(EINVAL, "command buffer: " + what);
  };
  constexpr size_t kHeader = sizeof(npu_cmdbuf_header);
  if (buffer.size() < kHeader) {
    return buf_error("size " + std::to_string(buffer.size()) + " smaller than the " +
                     std::to_string(kHeader) + "-byte header");
  }
  npu_cmdbuf_header h;
  std::memcpy(&h, buffer.data(), kHeader);
  if (h.magic != NPU_ISA_MAGIC) {
    return buf_error("field magic: expected " + hex(NPU_ISA_MAGIC) + ", got " + hex(h.magic));
  }
  if (h.version_major != NPU_ISA_VERSION_MAJOR) {
    return buf_error("field version_major: expected " + std::to_string(NPU_ISA_VERSION_MAJOR) +
                     ", got " + std::to_string(h.version_major));
  }
  if (h.version_minor > NPU_ISA_VERSION_MINOR) {
    return buf_error("field version_minor: " + std::to_string(h.version_minor) +
                     " newer than the device's " + std::to_string(NPU_ISA_VERSION_MINOR));
  }
  if (h.num_cmds > NPU_MAX_CMDS) {
    return buf_error("field num_cmds: " + std::to_string(h.num_cmds) + " commands, more than the " +
                     std::to_string(NPU_MAX_CMDS) + " a command buffer may hold");
  }
  if (h.size != buffer.size()) {
    return buf_error("field size: header says " + std::to_string(h.size) + " bytes, buffer has " +
                     std::to_string(buffer.size()));
  }
  if (h.num_cmds == 0) return buf_error("field num_cmds: must be >= 1 (end is required)");
  const uint64_t expected_size = kHeader + uint64_t{h.num_cmds} * NPU_CMD_SIZE;
  if (expected_size != buffer.size()) {
    return buf_error("field size: expected 32 + num_cmds * 128 = " + std::to_string(expected_size) +
                     ", got " + std::to_string(h.size));
  }
  if (h.reserved != 0) return buf_error("field reserved: must be zero, got " + hex(h.reserved));
  if (h.required_features & ~uint64_t{NPU_FEATURES_ALL}) {
    return buf_error("field required_features: unknown feature bits " +
                     hex(h.required_features & ~uint64_t{NPU_FEATURES_ALL}));
  }
  if (const uint64_t missing = h.required_features & ~cfg.features; missing != 0) {
    return buf_error("field required_features: device lacks feature " + feature_names(missing));
  }

  Program prog;
  prog.header = h;
  prog.cmds = copy_commands(buffer.data() + kHeader, h.num_cmds);

  std::vector<SemUse> sems(cfg.num_semaphores);
  std::vector<Region> regions;
  for (uint32_t i = 0; i < h.num_cmds; ++i) {
    const npu_cmd& cmd = prog.cmds[i];
    PayloadChecker checker(i, cmd, cfg);
    NPU_TRY(check_structure(checker, cmd, h.required_features));
    const uint8_t op = cmd.hdr.opcode;
    if (op == NPU_OP_END && i + 1 != h.num_cmds) {
      return checker.error("end must be the last command (buffer has " +
                           std::to_string(h.num_cmds) + " commands)");
    }
    if (op == NPU_OP_SEM_SIGNAL || op == NPU_OP_SEM_WAIT) {
      SemUse& u = sems[cmd.sem.sem];
      const bool signal = op == NPU_OP_SEM_SIGNAL;
      int32_t& first = signal ? u.signal_cmd : u.wait_cmd;
      uint8_t& engine = signal ? u.signal_engine : u.wait_engine;
      if (first >= 0 && engine != cmd.hdr.engine) {
        return checker.field_error(
            "sem", "semaphore " + std::to_string(cmd.sem.sem) + " " +
                       (signal ? "signalled" : "waited on") + " by engine " +
                       engine_name(cmd.hdr.engine) + " here and by engine " + engine_name(engine) +
                       " at command " + std::to_string(first) + " (one " +
                       (signal ? "signaller" : "waiter") + " engine per semaphore)");
      }
      if (first < 0) {
        first = static_cast<int32_t>(i);
        engine = cmd.hdr.engine;
      }
    }
    NPU_TRY(check_regions(checker, cmd, cfg, regions));
    for (const Region& reg : regions) {
      if (reg.space == Space::Dram)
        prog.dram.push_back(DramAccess{i, reg.access, reg.begin, reg.end, reg.field});
    }
  }
  if (prog.cmds.back().hdr.opcode != NPU_OP_END) {
    PayloadChecker last(h.num_cmds - 1, prog.cmds.back(), cfg);
    return last.error("last command must be end");
  }
  NPU_TRY(detail::check_sync(prog.cmds, cfg));
  return prog;
}

const char* hazard_kind_name(uint32_t kind) {
  switch (kind) {
    case DRM_NPU_HAZARD_RAW:
      return "RAW";
    case DRM_NPU_HAZARD_WAR:
      return "WAR";
    case DRM_NPU_HAZARD_WAW:
      return "WAW";
    default:
      return "?";
  }
}

const char* fault_kind_name(uint32_t kind) {
  switch (kind) {
    case DRM_NPU_FAULT_NONE:
      return "none";
    case DRM_NPU_FAULT_PARSE:
      return "parse";
    case DRM_NPU_FAULT_MMU:
      return "mmu";
    case DRM_NPU_FAULT_SRAM_RANGE:
      return "sram_range";
    case DRM_NPU_FAULT_SEMAPHORE:
      return "semaphore";
    case DRM_NPU_FAULT_WATCHDOG:
      return "watchdog";
    default:
      return "unknown";
  }
}

}  // namespace npu::isa
