// run_matrix / run_vector: the opcode switch, hoisted out of every loop; the work is in
// matrix_*.cpp and vector_*.cpp.
#include "cancel.h"
#include "npu/emu/kernels.h"
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

void run_matrix(const npu_cmd& cmd, std::span<std::byte> sram, const std::atomic<bool>* cancel) {
  const kern::CancelScope scope(cancel);
  switch (cmd.hdr.opcode) {
    case NPU_OP_CONV2D:
      kern::conv2d(cmd.conv2d, sram);
      break;
    case NPU_OP_MATMUL:
      kern::matmul(cmd.matmul, sram);
      break;
    default:
      break;  // not a matrix command: the validator never lets one through
  }
}

void run_vector(const npu_cmd& cmd, std::span<std::byte> sram, const std::atomic<bool>* cancel) {
  const kern::CancelScope scope(cancel);
  switch (cmd.hdr.opcode) {
    case NPU_OP_ELTWISE:
      kern::eltwise(cmd.eltwise, sram);
      break;
    case NPU_OP_ACTIVATION:
      kern::activation(cmd.activation, sram);
      break;
    case NPU_OP_POOL:
      kern::pool(cmd.pool, sram);
      break;
    case NPU_OP_SOFTMAX:
      kern::softmax(cmd.softmax, sram);
      break;
    case NPU_OP_SCALE_SHIFT:
      kern::scale_shift(cmd.scale_shift, sram);
      break;
    case NPU_OP_QUANTIZE:
      kern::quantize(cmd.quant, sram);
      break;
    case NPU_OP_DEQUANTIZE:
      kern::dequantize(cmd.quant, sram);
      break;
    case NPU_OP_REQUANTIZE:
      kern::requantize(cmd.requant, sram);
      break;
    case NPU_OP_TRANSPOSE:
      kern::transpose(cmd.transpose, sram);
      break;
    case NPU_OP_REDUCE:
      kern::reduce(cmd.reduce, sram);
      break;
    default:
      break;
  }
}

}  // namespace npu::emu
