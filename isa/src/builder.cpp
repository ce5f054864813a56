// CommandBufferBuilder: fills npu_cmd structs from the typed argument structs. Each command
// goes to the engine the opcode table allows it (only SEM_*, MARKER and NOP take one).
#include "npu/isa/builder.h"

#include <cstring>

#include "common.h"
#include "npu/isa/opcodes.h"
#include "npu/isa/validate.h"

namespace npu::isa {
namespace {

/// A zeroed command; the engine defaults to the opcode's only one (opcodes.def).
npu_cmd blank(uint8_t opcode, uint16_t flags = 0, std::optional<uint8_t> engine = std::nullopt) {
  npu_cmd c;
  std::memset(&c, 0, sizeof c);
  c.hdr.opcode = opcode;
  c.hdr.engine = engine ? *engine : *find_opcode(opcode)->sole_engine();
  c.hdr.flags = flags;
  return c;
}

void set_strides(npu_vtensor& t, uint32_t addr, const std::array<uint32_t, 4>& shape,
                 const std::optional<std::array<uint32_t, 4>>& stride) {
  t = CommandBufferBuilder::contiguous(addr, shape);
  if (stride) {
    for (int i = 0; i < 4; ++i) t.stride[i] = (*stride)[i];
  }
}

npu_cmd make_dma(uint8_t opcode, const DmaArgs& a) {
  const bool load = opcode == NPU_OP_DMA_LOAD;
  npu_cmd c = blank(opcode);
  auto& d = c.dma;
  d.dram_addr = a.dram;
  d.sram_addr = a.sram;
  d.elem_size = a.elem_size;
  for (int i = 0; i < 3; ++i) {
    d.size[i] = a.size[i];
    if (load) {
      d.pad_before[i] = a.pad_before[i];
      d.pad_after[i] = a.pad_after[i];
    }
  }
  if (load) d.pad_value = a.pad_value;
  d.dram_dtype = a.dram_dtype;
  d.sram_dtype = a.sram_dtype;
  if (a.dram_stride) {
    for (int i = 0; i < 3; ++i) d.dram_stride[i] = (*a.dram_stride)[i];
  } else {
    const uint32_t es = a.dram_dtype != 0 ? dtype_size(a.dram_dtype) : a.elem_size;
    d.dram_stride[0] = es;
    d.dram_stride[1] = es * a.size[0];
    d.dram_stride[2] = es * a.size[0] * a.size[1];
  }
  if (a.sram_stride) {
    d.sram_stride[0] = (*a.sram_stride)[0];
    d.sram_stride[1] = (*a.sram_stride)[1];
  } else {
    uint32_t px = a.size[0], py = a.size[1];
    if (load) {
      px += a.pad_before[0] + a.pad_after[0];
      py += a.pad_before[1] + a.pad_after[1];
    }
    d.sram_stride[0] = a.elem_size * px;
    d.sram_stride[1] = a.elem_size * px * py;
  }
  return c;
}

npu_cmd make_sem(uint8_t opcode, uint8_t engine, uint32_t sem, uint32_t count) {
  npu_cmd c = blank(opcode, 0, engine);
  c.sem.sem = sem;
  c.sem.count = count;
  return c;
}

/// The window fields CONV2D and POOL share (same names in the arguments and the payload);
/// out_h/out_w 0 = derived from the window formula.
template <typename Payload, typename Args>
void set_window(Payload& v, const Args& a, uint8_t dil_h, uint8_t dil_w) {
  v.in_h = a.in_h;
  v.in_w = a.in_w;
  v.k_h = a.k_h;
  v.k_w = a.k_w;
  v.stride_h = a.stride_h;
  v.stride_w = a.stride_w;
  v.pad_top = a.pad_top;
  v.pad_left = a.pad_left;
  v.pad_bottom = a.pad_bottom;
  v.pad_right = a.pad_right;
  auto derived = [](uint16_t given, uint32_t in, uint32_t pad0, uint32_t pad1, uint32_t k,
                    uint32_t dil, uint32_t stride) {
    return given ? given
                 : static_cast<uint16_t>(
                       CommandBufferBuilder::conv_out_size(in, pad0, pad1, k, dil, stride));
  };
  v.out_h = derived(a.out_h, a.in_h, a.pad_top, a.pad_bottom, a.k_h, dil_h, a.stride_h);
  v.out_w = derived(a.out_w, a.in_w, a.pad_left, a.pad_right, a.k_w, dil_w, a.stride_w);
}

/// The integer clamps of an output: as given, else the output dtype's range.
template <typename Payload, typename Args>
void set_clamps(Payload& v, const Args& a) {
  v.clamp_min = a.clamp_min.value_or(dtype_min(a.out_dtype));
  v.clamp_max = a.clamp_max.value_or(dtype_max(a.out_dtype));
}

/// The output fields CONV2D and MATMUL share: dtype, zero point and both clamps.
template <typename Payload, typename Args>
void set_mm_output(Payload& v, const Args& a) {
  v.out_dtype = a.out_dtype;
  v.out_zp = a.out_zp;
  set_clamps(v, a);
  v.fclamp_min = a.fclamp_min;
  v.fclamp_max = a.fclamp_max;
}

}  // namespace

uint32_t CommandBufferBuilder::push(const npu_cmd& cmd) {
  cmds_.push_back(cmd);
  return static_cast<uint32_t>(cmds_.size() - 1);
}

uint32_t CommandBufferBuilder::add(const npu_cmd& cmd) {
  return push(cmd);
}

uint32_t CommandBufferBuilder::dma_load(const DmaArgs& a) {
  return push(make_dma(NPU_OP_DMA_LOAD, a));
}

uint32_t CommandBufferBuilder::dma_store(const DmaArgs& a) {
  return push(make_dma(NPU_OP_DMA_STORE, a));
}

uint32_t CommandBufferBuilder::conv2d(const Conv2dArgs& a) {
  npu_cmd c = blank(NPU_OP_CONV2D, a.bias ? NPU_MM_FLAG_BIAS : 0);
  auto& v = c.conv2d;
  v.in_addr = a.in_addr;
  v.w_addr = a.w_addr;
  v.out_addr = a.out_addr;
  v.chan_addr = a.chan_addr;
  set_window(v, a, a.dil_h, a.dil_w);
  v.in_c = a.in_c;
  v.out_c = a.out_c;
  v.groups = a.groups;
  v.dil_h = a.dil_h;
  v.dil_w = a.dil_w;
  v.in_dtype = a.in_dtype;
  v.w_dtype = a.w_dtype;
  v.in_zp = a.in_zp;
  set_mm_output(v, a);
  return push(c);
}

uint32_t CommandBufferBuilder::matmul(const MatmulArgs& a) {
  const uint16_t flags =
      (a.bias ? NPU_MM_FLAG_BIAS : 0) | (a.transpose_b ? NPU_MM_FLAG_TRANSPOSE_B : 0);
  npu_cmd c = blank(NPU_OP_MATMUL, flags);
  auto& v = c.matmul;
  v.a_addr = a.a_addr;
  v.b_addr = a.b_addr;
  v.out_addr = a.out_addr;
  v.chan_addr = a.chan_addr;
  v.m = a.m;
  v.k = a.k;
  v.n = a.n;
  v.batch = a.batch;
  v.a_batch_stride = a.a_batch_stride.value_or(a.m * a.k);
  v.b_batch_stride = a.b_batch_stride.value_or(a.k * a.n);
  v.out_batch_stride = a.out_batch_stride.value_or(a.m * a.n);
  v.a_dtype = a.a_dtype;
  v.b_dtype = a.b_dtype;
  v.a_zp = a.a_zp;
  set_mm_output(v, a);
  return push(c);
}

uint32_t CommandBufferBuilder::eltwise(const EltwiseArgs& a) {
  npu_cmd c = blank(NPU_OP_ELTWISE);
  auto& v = c.eltwise;
  v.op = a.op;
  v.dtype = a.dtype;
  for (int i = 0; i < 4; ++i) v.shape[i] = a.shape[i];
  set_strides(v.a, a.a_addr, a.shape, a.a_stride);
  set_strides(v.b, a.b_addr, a.shape, a.b_stride);
  set_strides(v.out, a.out_addr, a.shape, a.out_stride);
  return push(c);
}

uint32_t CommandBufferBuilder::activation(const ActivationArgs& a) {
  npu_cmd c = blank(NPU_OP_ACTIVATION);
  auto& v = c.activation;
  v.func = a.func;
  v.dtype = a.dtype;
  for (int i = 0; i < 4; ++i) v.shape[i] = a.shape[i];
  set_strides(v.in, a.in_addr, a.shape, a.in_stride);
  set_strides(v.out, a.out_addr, a.shape, a.out_stride);
  v.alpha = a.alpha;
  v.beta = a.beta;
  return push(c);
}

uint32_t CommandBufferBuilder::pool(const PoolArgs& a) {
  npu_cmd c = blank(NPU_OP_POOL, a.count_pad ? NPU_POOL_FLAG_COUNT_PAD : 0);
  auto& v = c.pool;
  v.kind = a.kind;
  v.dtype = a.dtype;
  v.in_addr = a.in_addr;
  v.out_addr = a.out_addr;
  v.channels = a.channels;
  set_window(v, a, 1, 1);
  return push(c);
}

uint32_t CommandBufferBuilder::softmax(const SoftmaxArgs& a) {
  npu_cmd c = blank(NPU_OP_SOFTMAX, a.log ? NPU_SOFTMAX_FLAG_LOG : 0);
  c.softmax.in_addr = a.in_addr;
  c.softmax.out_addr = a.out_addr;
  c.softmax.rows = a.rows;
  c.softmax.len = a.len;
  return push(c);
}

uint32_t CommandBufferBuilder::scale_shift(const ScaleShiftArgs& a) {
  npu_cmd c = blank(NPU_OP_SCALE_SHIFT);
  auto& v = c.scale_shift;
  v.in_addr = a.in_addr;
  v.out_addr = a.out_addr;
  v.scale_addr = a.scale_addr;
  v.shift_addr = a.shift_addr;
  v.outer = a.outer;
  v.channels = a.channels;
  return push(c);
}

uint32_t CommandBufferBuilder::quantize(const QuantArgs& a) {
  npu_cmd c = blank(NPU_OP_QUANTIZE);
  auto& v = c.quant;
  v.in_addr = a.in_addr;
  v.out_addr = a.out_addr;
  v.count = a.count;
  v.channels = a.channels;
  v.inner = a.inner;
  v.params_addr = a.params_addr;
  v.scale = a.scale;
  v.zp = a.zp;
  v.in_dtype = NPU_DTYPE_FP32;
  v.out_dtype = a.dtype;
  return push(c);
}

uint32_t CommandBufferBuilder::dequantize(const QuantArgs& a) {
  const uint32_t i = quantize(a);
  auto& v = cmds_[i].quant;
  cmds_[i].hdr.opcode = NPU_OP_DEQUANTIZE;
  v.in_dtype = a.dtype;
  v.out_dtype = NPU_DTYPE_FP32;
  return i;
}

uint32_t CommandBufferBuilder::requantize(const RequantArgs& a) {
  npu_cmd c = blank(NPU_OP_REQUANTIZE);
  auto& v = c.requant;
  v.in_addr = a.in_addr;
  v.out_addr = a.out_addr;
  v.count = a.count;
  v.multiplier = a.multiplier;
  v.shift = a.shift;
  v.in_zp = a.in_zp;
  v.out_zp = a.out_zp;
  set_clamps(v, a);
  v.in_dtype = a.in_dtype;
  v.out_dtype = a.out_dtype;
  return push(c);
}

uint32_t CommandBufferBuilder::transpose(const TransposeArgs& a) {
  npu_cmd c = blank(NPU_OP_TRANSPOSE);
  auto& v = c.transpose;
  v.in_addr = a.in_addr;
  v.out_addr = a.out_addr;
  for (int i = 0; i < 4; ++i) {
    v.in_shape[i] = a.in_shape[i];
    v.perm[i] = a.perm[i];
  }
  v.elem_size = a.elem_size;
  return push(c);
}

uint32_t CommandBufferBuilder::reduce(const ReduceArgs& a) {
  npu_cmd c = blank(NPU_OP_REDUCE);
  auto& v = c.reduce;
  v.kind = a.kind;
  v.in_addr = a.in_addr;
  v.out_addr = a.out_addr;
  v.outer = a.outer;
  v.len = a.len;
  v.inner = a.inner;
  return push(c);
}

uint32_t CommandBufferBuilder::sem_signal(uint8_t engine, uint32_t sem, uint32_t count) {
  return push(make_sem(NPU_OP_SEM_SIGNAL, engine, sem, count));
}

uint32_t CommandBufferBuilder::sem_wait(uint8_t engine, uint32_t sem, uint32_t count) {
  return push(make_sem(NPU_OP_SEM_WAIT, engine, sem, count));
}

uint32_t CommandBufferBuilder::marker(uint8_t engine, uint32_t id) {
  npu_cmd c = blank(NPU_OP_MARKER, 0, engine);
  c.marker.id = id;
  return push(c);
}

uint32_t CommandBufferBuilder::nop(uint8_t engine) {
  return push(blank(NPU_OP_NOP, 0, engine));
}

uint32_t CommandBufferBuilder::fence(bool irq, uint32_t value) {
  npu_cmd c = blank(NPU_OP_FENCE, irq ? NPU_FENCE_FLAG_IRQ : 0);
  c.fence.value = value;
  return push(c);
}

uint32_t CommandBufferBuilder::safe_point() {
  return push(blank(NPU_OP_FENCE, NPU_FENCE_FLAG_PREEMPT));
}

uint32_t CommandBufferBuilder::end() {
  return push(blank(NPU_OP_END));
}

std::vector<std::byte> CommandBufferBuilder::finish(uint64_t required_features) {
  if (cmds_.empty() || cmds_.back().hdr.opcode != NPU_OP_END) end();
  return serialize(cmds_, required_features | program_features(cmds_));
}

std::vector<std::byte> CommandBufferBuilder::serialize(std::span<const npu_cmd> cmds,
                                                       uint64_t required_features) {
  npu_cmdbuf_header h;
  std::memset(&h, 0, sizeof h);
  h.magic = NPU_ISA_MAGIC;
  h.version_major = NPU_ISA_VERSION_MAJOR;
  h.version_minor = NPU_ISA_VERSION_MINOR;
  h.size = static_cast<uint32_t>(sizeof h + cmds.size() * NPU_CMD_SIZE);
  h.num_cmds = static_cast<uint32_t>(cmds.size());
  h.required_features = required_features;
  std::vector<std::byte> out(sizeof h + cmds.size() * NPU_CMD_SIZE);
  std::memcpy(out.data(), &h, sizeof h);
  if (!cmds.empty()) std::memcpy(out.data() + sizeof h, cmds.data(), cmds.size() * NPU_CMD_SIZE);
  return out;
}

npu_vtensor CommandBufferBuilder::contiguous(uint32_t addr, std::array<uint32_t, 4> shape) {
  npu_vtensor t{};
  t.addr = addr;
  t.stride[3] = 1;
  t.stride[2] = shape[3];
  t.stride[1] = shape[3] * shape[2];
  t.stride[0] = shape[3] * shape[2] * shape[1];
  return t;
}

uint32_t CommandBufferBuilder::conv_out_size(uint32_t in, uint32_t pad0, uint32_t pad1, uint32_t k,
                                             uint32_t dil, uint32_t stride) {
  const uint64_t padded = uint64_t{in} + pad0 + pad1;
  if (k == 0 || dil == 0 || stride == 0) return 0;
  const uint64_t extent = uint64_t{dil} * (k - 1) + 1;
  if (extent > padded) return 0;
  return static_cast<uint32_t>((padded - extent) / stride + 1);
}

}  // namespace npu::isa
