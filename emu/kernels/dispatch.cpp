// run_command: the opcode switch, generated from the opcode table and hoisted out of every
// loop; the work is in dma.cpp, matrix_*.cpp and vector_*.cpp.
#include "cancel.h"
#include "npu/emu/kernels.h"
#include "npu/isa/opcodes.h"
#include "ops.h"

namespace npu::emu {

namespace kern {
namespace {
thread_local const std::atomic<bool>* tl_cancel = nullptr;
}  // namespace

bool cancelled() {
  return tl_cancel != nullptr && tl_cancel->load(std::memory_order_relaxed);
}

CancelScope::CancelScope(const std::atomic<bool>* flag) : previous_(tl_cancel) {
  tl_cancel = flag;
}
CancelScope::~CancelScope() {
  tl_cancel = previous_;
}
}  // namespace kern

void run_command(const npu_cmd& cmd, std::span<std::byte> sram, std::byte* dram,
                 const std::atomic<bool>* cancel) {
  const kern::CancelScope scope(cancel);
  switch (cmd.hdr.opcode) {
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, CHECK, FEATURES, REGIONS, COST, \
                 REF, KERNEL)                                                                  \
  case NPU_OP_##ID:                                                                            \
    kern::KERNEL(cmd.PAYLOAD, sram, dram);                                                     \
    break;
#include "npu/isa/opcodes.def"
    default:
      break;  // a control command or an unknown opcode: nothing to compute
  }
}

void run_matrix(const npu_cmd& cmd, std::span<std::byte> sram, const std::atomic<bool>* cancel) {
  if (isa::opcode_allows_engine(cmd.hdr.opcode, NPU_ENGINE_MATRIX)) {
    run_command(cmd, sram, nullptr, cancel);
  }
}

void run_vector(const npu_cmd& cmd, std::span<std::byte> sram, const std::atomic<bool>* cancel) {
  if (isa::opcode_allows_engine(cmd.hdr.opcode, NPU_ENGINE_VECTOR)) {
    run_command(cmd, sram, nullptr, cancel);
  }
}

}  // namespace npu::emu
