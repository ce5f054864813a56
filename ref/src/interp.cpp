// Reference interpreter: decodes each command (by memcpy into its payload struct, no type
// punning) and runs the REF function its opcode-table row names (npu/isa/opcodes.def); those
// copy the SRAM operands into typed vectors after a bounds check, run the reference operator
// and copy the result back (exec_dma.cpp, exec_matrix.cpp, exec_vector.cpp).
#include "npu/ref/interp.h"

#include <cstring>
#include <string>
#include <type_traits>

#include "exec.h"

namespace npu::ref {
namespace {

template <typename T>
T decode(const npu_cmd& cmd) {
  static_assert(sizeof(T) == sizeof(npu_cmd) && std::is_trivially_copyable_v<T>);
  T out;
  std::memcpy(&out, &cmd, sizeof(T));
  return out;
}

}  // namespace

Expected<void> execute(const npu_cmd& cmd, std::span<std::byte> sram, FlatDram& dram) {
  switch (cmd.bytes[0]) {  // the opcode, read through the byte view
// Control commands only order work: nothing to do in program order.
#define NPU_CONTROL(VALUE, ID, ...) \
  case NPU_OP_##ID:                 \
    return ok();
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, CHECK, FEATURES, REGIONS, COST, \
                 REF, KERNEL)                                                                  \
  case NPU_OP_##ID:                                                                            \
    return detail::REF(decode<decltype(npu_cmd::PAYLOAD)>(cmd), sram, dram);
#include "npu/isa/opcodes.def"
    default:
      return make_error(EINVAL, "opcode: unknown opcode " + std::to_string(cmd.bytes[0]));
  }
}

Expected<void> run_program(std::span<const npu_cmd> cmds, std::span<std::byte> sram,
                           FlatDram& dram) {
  size_t end = cmds.size();
  for (size_t i = 0; i < cmds.size(); ++i) {
    if (cmds[i].bytes[0] == NPU_OP_END) {
      end = i;
      break;
    }
  }
  if (end == cmds.size()) {
    return make_error(EINVAL,
                      "program: no end command in " + std::to_string(cmds.size()) + " commands");
  }
  for (size_t i = 0; i < end; ++i) {
    if (auto r = execute(cmds[i], sram, dram); !r) {
      return make_error(r.error().code, "command " + std::to_string(i) + ": " + r.error().message);
    }
  }
  return ok();
}

}  // namespace npu::ref
