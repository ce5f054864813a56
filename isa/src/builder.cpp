// CommandBufferBuilder: fills npu_cmd structs from the typed argument structs. The fields that
// are plain copies of an argument are encoded from the field table (npu/isa/fields.def); a
// method adds only what the table cannot say (derived defaults, flags, fixed dtypes). Each
// command goes to the engine the opcode table allows it (only SEM_*, MARKER and NOP take one).
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

/// One field from its argument: scalars as is, arrays element by element.
template <typename D, typename S>
void put(D& d, const S& s) {
  d = s;
}
template <typename D, size_t N, typename S>
void put(D (&d)[N], const std::array<S, N>& s) {
  for (size_t i = 0; i < N; ++i) d[i] = s[i];
}

// encode(): every `arg` field of the payload from its argument, every given `opt` field
// (fields.def, BUILD column); the builder methods then derive absent `opt` fields and fill
// `set` fields and flags.
#define NPU_ENC_arg(MEMBER, NAME, ...) put(v.MEMBER, a.NAME);
#define NPU_ENC_opt(MEMBER, NAME) \
  if (a.NAME) put(v.MEMBER, *a.NAME);
#define NPU_ENC_set(...)
#define NPU_ENC(P, MEMBER, T, N, ENUM, STYLE, BUILD, ...) \
  NPU_ENC_##BUILD(MEMBER __VA_OPT__(, ) __VA_ARGS__)
#define NPU_ENC_NONE(P, MEMBER)
#define NPU_ENCODER(P, ARGS)                   \
  void encode(npu_cmd_##P& v, const ARGS& a) { \
    NPU_FIELDS_##P(NPU_ENC, NPU_ENC_NONE)      \
  }
NPU_ENCODER(dma, DmaArgs)
NPU_ENCODER(conv2d, Conv2dArgs)
NPU_ENCODER(matmul, MatmulArgs)
NPU_ENCODER(eltwise, EltwiseArgs)
NPU_ENCODER(activation, ActivationArgs)
NPU_ENCODER(pool, PoolArgs)
NPU_ENCODER(softmax, SoftmaxArgs)
NPU_ENCODER(scale_shift, ScaleShiftArgs)
NPU_ENCODER(quant, QuantArgs)
NPU_ENCODER(requant, RequantArgs)
NPU_ENCODER(transpose, TransposeArgs)
NPU_ENCODER(reduce, ReduceArgs)
NPU_ENCODER(moments, MomentsArgs)
#undef NPU_ENCODER
#undef NPU_ENC_NONE
#undef NPU_ENC
#undef NPU_ENC_set
#undef NPU_ENC_opt
#undef NPU_ENC_arg

/// A vtensor's strides when none are given: contiguous over shape.
void default_strides(npu_vtensor& t, const std::array<uint32_t, 4>& shape,
                     const std::optional<std::array<uint32_t, 4>>& given) {
  if (given) return;
  const npu_vtensor c = CommandBufferBuilder::contiguous(t.addr, shape);
  for (int i = 0; i < 4; ++i) t.stride[i] = c.stride[i];
}

npu_cmd make_dma(uint8_t opcode, const DmaArgs& a) {
  const bool load = opcode == NPU_OP_DMA_LOAD;
  DmaArgs args = a;
  if (!load) {  // DMA_STORE has no padding
    args.pad_before = args.pad_after = {0, 0, 0};
    args.pad_value = 0;
  }
  npu_cmd c = blank(opcode);
  auto& d = c.dma;
  encode(d, args);
  if (!a.dram_stride) {
    const uint32_t es = a.dram_dtype != 0 ? dtype_size(a.dram_dtype) : a.elem_size;
    d.dram_stride[0] = es;
    d.dram_stride[1] = es * a.size[0];
    d.dram_stride[2] = es * a.size[0] * a.size[1];
  }
  if (!a.sram_stride) {
    const uint32_t px = a.size[0] + args.pad_before[0] + args.pad_after[0];
    const uint32_t py = a.size[1] + args.pad_before[1] + args.pad_after[1];
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

/// The output size of a window (CONV2D, POOL) when not given (0): the window formula.
template <typename Payload>
void derive_window(Payload& v, uint8_t dil_h, uint8_t dil_w) {
  auto derived = [](uint16_t given, uint32_t in, uint32_t pad0, uint32_t pad1, uint32_t k,
                    uint32_t dil, uint32_t stride) {
    return given ? given
                 : static_cast<uint16_t>(
                       CommandBufferBuilder::conv_out_size(in, pad0, pad1, k, dil, stride));
  };
  v.out_h = derived(v.out_h, v.in_h, v.pad_top, v.pad_bottom, v.k_h, dil_h, v.stride_h);
  v.out_w = derived(v.out_w, v.in_w, v.pad_left, v.pad_right, v.k_w, dil_w, v.stride_w);
}

/// The integer clamps of an output when not given: the output dtype's range.
template <typename Payload, typename Args>
void derive_clamps(Payload& v, const Args& a) {
  if (!a.clamp_min) v.clamp_min = dtype_min(a.out_dtype);
  if (!a.clamp_max) v.clamp_max = dtype_max(a.out_dtype);
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
  encode(c.conv2d, a);
  derive_window(c.conv2d, a.dil_h, a.dil_w);
  derive_clamps(c.conv2d, a);
  return push(c);
}

uint32_t CommandBufferBuilder::matmul(const MatmulArgs& a) {
  const uint16_t flags =
      (a.bias ? NPU_MM_FLAG_BIAS : 0) | (a.transpose_b ? NPU_MM_FLAG_TRANSPOSE_B : 0);
  npu_cmd c = blank(NPU_OP_MATMUL, flags);
  auto& v = c.matmul;
  encode(v, a);
  if (!a.a_batch_stride) v.a_batch_stride = a.m * a.k;
  if (!a.b_batch_stride) v.b_batch_stride = a.k * a.n;
  if (!a.out_batch_stride) v.out_batch_stride = a.m * a.n;
  derive_clamps(v, a);
  return push(c);
}

uint32_t CommandBufferBuilder::eltwise(const EltwiseArgs& a) {
  npu_cmd c = blank(NPU_OP_ELTWISE);
  auto& v = c.eltwise;
  encode(v, a);
  default_strides(v.a, a.shape, a.a_stride);
  default_strides(v.b, a.shape, a.b_stride);
  default_strides(v.out, a.shape, a.out_stride);
  return push(c);
}

uint32_t CommandBufferBuilder::activation(const ActivationArgs& a) {
  npu_cmd c = blank(NPU_OP_ACTIVATION);
  auto& v = c.activation;
  encode(v, a);
  default_strides(v.in, a.shape, a.in_stride);
  default_strides(v.out, a.shape, a.out_stride);
  return push(c);
}

uint32_t CommandBufferBuilder::pool(const PoolArgs& a) {
  npu_cmd c = blank(NPU_OP_POOL, a.count_pad ? NPU_POOL_FLAG_COUNT_PAD : 0);
  encode(c.pool, a);
  derive_window(c.pool, 1, 1);
  return push(c);
}

uint32_t CommandBufferBuilder::softmax(const SoftmaxArgs& a) {
  npu_cmd c = blank(NPU_OP_SOFTMAX, a.log ? NPU_SOFTMAX_FLAG_LOG : 0);
  encode(c.softmax, a);
  return push(c);
}

uint32_t CommandBufferBuilder::scale_shift(const ScaleShiftArgs& a) {
  npu_cmd c = blank(NPU_OP_SCALE_SHIFT);
  encode(c.scale_shift, a);
  return push(c);
}

uint32_t CommandBufferBuilder::quantize(const QuantArgs& a) {
  npu_cmd c = blank(NPU_OP_QUANTIZE);
  encode(c.quant, a);
  c.quant.in_dtype = NPU_DTYPE_FP32;
  c.quant.out_dtype = a.dtype;
  return push(c);
}

uint32_t CommandBufferBuilder::dequantize(const QuantArgs& a) {
  npu_cmd c = blank(NPU_OP_DEQUANTIZE);
  encode(c.quant, a);
  c.quant.in_dtype = a.dtype;
  c.quant.out_dtype = NPU_DTYPE_FP32;
  return push(c);
}

uint32_t CommandBufferBuilder::requantize(const RequantArgs& a) {
  npu_cmd c = blank(NPU_OP_REQUANTIZE);
  encode(c.requant, a);
  derive_clamps(c.requant, a);
  return push(c);
}

uint32_t CommandBufferBuilder::transpose(const TransposeArgs& a) {
  npu_cmd c = blank(NPU_OP_TRANSPOSE);
  encode(c.transpose, a);
  return push(c);
}

uint32_t CommandBufferBuilder::reduce(const ReduceArgs& a) {
  npu_cmd c = blank(NPU_OP_REDUCE);
  encode(c.reduce, a);
  return push(c);
}

uint32_t CommandBufferBuilder::moments(const MomentsArgs& a) {
  npu_cmd c = blank(NPU_OP_MOMENTS);
  encode(c.moments, a);
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
