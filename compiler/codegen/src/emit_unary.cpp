// Vector ops over contiguous element ranges: activation, quantize/dequantize, requantize,
// softmax (whole rows) and scale-shift (whole channel rows), all through emit_flat().
#include "flat.h"

namespace npu::codegen {

using detail::FlatSpec;

Expected<LayerReport> emit_activation(const ActivationOp& op_in, EmitContext& ctx) {
  ActivationOp op = op_in;
  // Half-precision tensors compute in fp32; a copy between them moves the bytes as they are.
  const bool raw_copy = op.func == NPU_ACT_COPY && op.input.dtype == op.output.dtype;
  if (!raw_copy) op.input = op.input.widened(), op.output = op.output.widened();
  NPU_TRY(detail::require_contiguous("activation", op.name, op.input, op.output));
  if (op.input.elements() != op.output.elements() ||
      op.input.compute_dtype() != op.output.compute_dtype())
    return make_error(EINVAL, "activation " + op.name + ": output " + op.output.str() +
                                  " does not match input " + op.input.str());
  FlatSpec s;
  s.op = "activation", s.name = op.name, s.count = op.input.elements();
  detail::flat_io(s, op.input, op.output);
  s.compute = [&](isa::CommandBufferBuilder& b, uint64_t, uint64_t n, uint32_t in, uint32_t out,
                  uint32_t) {
    isa::ActivationArgs a;
    a.func = op.func, a.dtype = op.input.compute_dtype(), a.shape = {1, 1, 1, uint32_t(n)};
    a.in_addr = in, a.out_addr = out, a.alpha = op.alpha, a.beta = op.beta;
    b.activation(a);
  };
  return detail::emit_flat(ctx, s);
}

Expected<LayerReport> emit_quantize(const QuantizeOp& op_in, EmitContext& ctx) {
  QuantizeOp op = op_in;  // the float side of a half tensor is fp32 in SRAM
  op.input = op.input.widened(), op.output = op.output.widened();
  const std::string kind = op.dequantize ? "dequantize" : "quantize";
  NPU_TRY(detail::require_contiguous(kind, op.name, op.input, op.output));
  if (op.input.elements() != op.output.elements())
    return make_error(EINVAL, kind + " " + op.name + ": element counts differ");
  const bool per_channel = op.channels > 1;
  if (per_channel && (op.params_va == 0 || op.inner == 0))
    return make_error(EINVAL, kind + " " + op.name + ": per-channel needs params_va and inner");
  FlatSpec s;
  s.op = kind, s.name = op.name, s.count = op.input.elements();
  detail::flat_io(s, op.input, op.output);
  // Per channel, tiles start on a multiple of `inner`; the params are loaded twice in a row so
  // that a tile starting at channel c0 reads them from entry c0 with the modulo intact.
  if (per_channel) {
    s.align = op.inner;
    if (s.count % op.inner)
      return make_error(EINVAL, kind + " " + op.name + ": count % inner != 0");
    s.const_bytes = 2ull * op.channels * sizeof(npu_qparam);
    s.load_consts = [&](isa::CommandBufferBuilder& b, uint32_t at) -> Expected<void> {
      const uint64_t bytes = uint64_t(op.channels) * sizeof(npu_qparam);
      NPU_TRY(detail::emit_dma_bytes(b, true, op.params_va, at, bytes, op.name + " params"));
      return detail::emit_dma_bytes(b, true, op.params_va, uint32_t(at + bytes), bytes,
                                    op.name + " params");
    };
  }
  s.compute = [&, per_channel](isa::CommandBufferBuilder& b, uint64_t first, uint64_t n,
                               uint32_t in, uint32_t out, uint32_t consts) {
    isa::QuantArgs a;
    a.in_addr = in, a.out_addr = out, a.count = uint32_t(n);
    a.scale = op.scale, a.zp = op.zp;
    a.dtype = op.dequantize ? op.input.dtype : op.output.dtype;
    if (per_channel) {
      a.channels = op.channels, a.inner = op.inner;
      a.params_addr = uint32_t(consts + (first / op.inner % op.channels) * sizeof(npu_qparam));
    }
    if (op.dequantize)
      b.dequantize(a);
    else
      b.quantize(a);
  };
  return detail::emit_flat(ctx, s);
}

Expected<LayerReport> emit_requantize(const RequantizeOp& op, EmitContext& ctx) {
  NPU_TRY(detail::require_contiguous("requantize", op.name, op.input, op.output));
  if (op.input.elements() != op.output.elements())
    return make_error(EINVAL, "requantize " + op.name + ": element counts differ");
  FlatSpec s;
  s.op = "requantize", s.name = op.name, s.count = op.input.elements();
  s.e_in = op.input.elem_size(), s.e_out = op.output.elem_size();
  s.in_va = op.input.va, s.out_va = op.output.va;
  s.compute = [&](isa::CommandBufferBuilder& b, uint64_t, uint64_t n, uint32_t in, uint32_t out,
                  uint32_t) {
    isa::RequantArgs a;
    a.in_addr = in, a.out_addr = out, a.count = uint32_t(n);
    a.multiplier = op.multiplier, a.shift = op.shift, a.in_zp = op.in_zp, a.out_zp = op.out_zp;
    a.clamp_min = op.clamp_min, a.clamp_max = op.clamp_max;
    a.in_dtype = op.input.dtype, a.out_dtype = op.output.dtype;
    b.requantize(a);
  };
  return detail::emit_flat(ctx, s);
}

Expected<LayerReport> emit_softmax(const SoftmaxOp& op_in, EmitContext& ctx) {
  SoftmaxOp op = op_in;  // half-precision tensors: exponentials and sums in fp32
  op.input = op.input.widened(), op.output = op.output.widened();
  NPU_TRY(detail::require_contiguous("softmax", op.name, op.input, op.output));
  if (op.input.compute_dtype() != NPU_DTYPE_FP32 || op.output.compute_dtype() != NPU_DTYPE_FP32 ||
      op.input.dims != op.output.dims || op.input.rank() == 0)
    return make_error(EINVAL, "softmax " + op.name + ": needs fp32 input and output of one shape");
  FlatSpec s;
  s.op = "softmax", s.name = op.name, s.count = op.input.elements();
  detail::flat_io(s, op.input, op.output);
  s.align = op.input.dims.back();
  s.compute = [&](isa::CommandBufferBuilder& b, uint64_t, uint64_t n, uint32_t in, uint32_t out,
                  uint32_t) {
    b.softmax({in, out, uint32_t(n / s.align), uint32_t(s.align), op.log});
  };
  return detail::emit_flat(ctx, s);
}

Expected<LayerReport> emit_scale_shift(const ScaleShiftOp& op_in, EmitContext& ctx) {
  ScaleShiftOp op = op_in;  // half-precision tensors compute in fp32
  op.input = op.input.widened(), op.output = op.output.widened();
  NPU_TRY(detail::require_contiguous("scale_shift", op.name, op.input, op.output));
  if (op.input.compute_dtype() != NPU_DTYPE_FP32 || op.output.compute_dtype() != NPU_DTYPE_FP32 ||
      op.input.dims != op.output.dims || op.input.rank() == 0)
    return make_error(EINVAL,
                      "scale_shift " + op.name + ": needs fp32 input and output of one shape");
  const uint32_t c = op.input.dims.back();
  const uint64_t vec = detail::slot_bytes(uint64_t(c) * 4);
  FlatSpec s;
  s.op = "scale_shift", s.name = op.name, s.count = op.input.elements();
  detail::flat_io(s, op.input, op.output);
  s.align = c;
  s.const_bytes = 2 * vec;
  s.load_consts = [&, vec](isa::CommandBufferBuilder& b, uint32_t at) -> Expected<void> {
    NPU_TRY(detail::emit_dma_bytes(b, true, op.scale_va, at, uint64_t(c) * 4, op.name + " scale"));
    return detail::emit_dma_bytes(b, true, op.shift_va, uint32_t(at + vec), uint64_t(c) * 4,
                                  op.name + " shift");
  };
  s.compute = [&, vec](isa::CommandBufferBuilder& b, uint64_t, uint64_t n, uint32_t in,
                       uint32_t out, uint32_t consts) {
    b.scale_shift({in, out, consts, uint32_t(consts + vec), uint32_t(n / c), c});
  };
  return detail::emit_flat(ctx, s);
}

}  // namespace npu::codegen
