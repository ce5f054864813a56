// Reference interpreter of the command-buffer ISA: executes commands one at a time, in
// program order, on a byte SRAM and a flat DRAM model, by decoding each command into the
// reference operators. Semaphores, fences and markers only order work and are no-ops here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>

#include "npu/expected.h"
#include "npu/isa/validate.h"
#include "npu_isa.h"

namespace npu::ref {

/// Device virtual address ranges backed by host bytes (the interpreter's whole "MMU").
class FlatDram {
 public:
  /// Maps [va, va + mem.size()) to `mem`. Fails (EINVAL) on an empty span, a range that wraps
  /// around 2^64 or one overlapping an existing mapping. `mem` must outlive its use.
  Expected<void> map(uint64_t va, std::span<std::byte> mem);

  /// Removes the mapping starting exactly at `va`; false if there is none.
  bool unmap(uint64_t va);

  /// The host bytes of [va, va + size), which must lie inside one mapping (EFAULT otherwise,
  /// naming the range).
  Expected<std::span<std::byte>> lookup(uint64_t va, uint64_t size) const;

 private:
  std::map<uint64_t, std::span<std::byte>> ranges_;  // by start va
};

/// Executes one command. Every SRAM access is checked against sram.size() and every DRAM
/// access against `dram`; inconsistent parameters, unsupported dtypes and out-of-range
/// accesses give an Error (message "<op>: <field>: ...") and leave memory possibly partly
/// written by that command. END, NOP, FENCE, MARKER and SEM_* do nothing.
Expected<void> execute(const npu_cmd& cmd, std::span<std::byte> sram, FlatDram& dram);

/// Executes `cmds` in order up to and including the first END (which must exist). Errors are
/// those of execute() prefixed with "command <index>: ".
Expected<void> run_program(std::span<const npu_cmd> cmds, std::span<std::byte> sram,
                           FlatDram& dram);

/// run_program over a validated program's commands.
inline Expected<void> run_program(const isa::Program& program, std::span<std::byte> sram,
                                  FlatDram& dram) {
  return run_program(std::span<const npu_cmd>(program.cmds), sram, dram);
}

}  // namespace npu::ref
