// command_regions: the byte ranges each operand of a command reads or writes (docs/isa.md).
#include "npu/isa/regions.h"

#include <string>

#include "common.h"

namespace npu::isa {
namespace {

using detail::dtype_size;

Error overflow(const char* field) {
  return make_error(EINVAL, std::string("field ") + field + ": byte arithmetic overflows 64 bits");
}

Error bad_dtype(const char* field, uint8_t dtype) {
  return make_error(EINVAL,
                    std::string("field ") + field + ": unknown dtype " + std::to_string(dtype));
}

/// acc += a * b * c; false on overflow.
bool mac(uint64_t& acc, uint64_t a, uint64_t b, uint64_t c = 1) {
  uint64_t p;
  return detail::mul(a, b, p) && detail::mul(p, c, p) && detail::add(acc, p, acc);
}

/// Appends [begin, begin + bytes) unless empty; false when the end overflows.
bool push(std::vector<Region>& out, Space space, uint8_t access, uint64_t begin, uint64_t bytes,
          const char* field) {
  if (bytes == 0) return true;
  uint64_t end;
  if (!detail::add(begin, bytes, end)) return false;
  out.push_back(Region{space, access, begin, end, field});
  return true;
}

/// A contiguous operand of `count` elements of `elem` bytes: count = n0 * n1 * n2 * n3.
Expected<void> dense(std::vector<Region>& out, uint8_t access, uint64_t addr, const char* field,
                     uint64_t elem, uint64_t n0, uint64_t n1 = 1, uint64_t n2 = 1,
                     uint64_t n3 = 1) {
  uint64_t bytes = 0;
  uint64_t p;
  if (!detail::mul(n0, n1, p) || !detail::mul(p, n2, p) || !detail::mul(p, n3, p) ||
      !mac(bytes, p, elem)) {
    return overflow(field);
  }
  if (!push(out, Space::Sram, access, addr, bytes, field)) return overflow(field);
  return ok();
}

/// Bounding range of a strided 4-D view: addr + sum((shape[i]-1)*stride[i])*elem + elem.
Expected<void> vtensor(std::vector<Region>& out, uint8_t access, const npu_vtensor& t,
                       const uint32_t (&shape)[4], uint64_t elem, const char* field,
                       const char* stride_field) {
  for (uint32_t s : shape) {
    if (s == 0) return ok();
  }
  uint64_t span = 0;
  for (int i = 0; i < 4; ++i) {
    if (!mac(span, shape[i] - 1u, t.stride[i])) return overflow(stride_field);
  }
  uint64_t bytes = 0;
  if (!mac(bytes, span, elem) || !detail::add(bytes, elem, bytes)) return overflow(stride_field);
  if (!push(out, Space::Sram, access, t.addr, bytes, field)) return overflow(stride_field);
  return ok();
}

Expected<void> dma_regions(const npu_cmd_dma& c, bool load, std::vector<Region>& out) {
  // DRAM side: the box itself, fully strided.
  uint8_t dram_access = load ? kRead : kWrite;
  uint8_t sram_access = load ? kWrite : kRead;
  static constexpr const char* kDramStride[3] = {"dram_stride[0]", "dram_stride[1]",
                                                 "dram_stride[2]"};
  static constexpr const char* kSramStride[2] = {"sram_stride[0]", "sram_stride[1]"};
  for (uint32_t s : c.size) {
    if (s == 0) return ok();
  }
  uint64_t dram_bytes = 0;
  for (int i = 0; i < 3; ++i) {
    if (!mac(dram_bytes, c.size[i] - 1u, c.dram_stride[i])) return overflow(kDramStride[i]);
  }
  if (!detail::add(dram_bytes, c.elem_size, dram_bytes)) return overflow("dram_stride");
  // SRAM side: the (padded) box, x contiguous, y/z strided.
  uint64_t dims[3];
  for (int i = 0; i < 3; ++i) {
    dims[i] = uint64_t{c.size[i]} + (load ? uint64_t{c.pad_before[i]} + c.pad_after[i] : 0);
  }
  uint64_t sram_bytes = 0;
  if (!mac(sram_bytes, dims[1] - 1, c.sram_stride[0])) return overflow(kSramStride[0]);
  if (!mac(sram_bytes, dims[2] - 1, c.sram_stride[1])) return overflow(kSramStride[1]);
  if (!mac(sram_bytes, dims[0], c.elem_size)) return overflow("size[0]");

  if (load) {
    if (!push(out, Space::Dram, dram_access, c.dram_addr, dram_bytes, "dram_addr")) {
      return overflow("dram_addr");
    }
    if (!push(out, Space::Sram, sram_access, c.sram_addr, sram_bytes, "sram_addr")) {
      return overflow("sram_addr");
    }
  } else {
    if (!push(out, Space::Sram, sram_access, c.sram_addr, sram_bytes, "sram_addr")) {
      return overflow("sram_addr");
    }
    if (!push(out, Space::Dram, dram_access, c.dram_addr, dram_bytes, "dram_addr")) {
      return overflow("dram_addr");
    }
  }
  return ok();
}

Expected<void> conv_regions(const npu_cmd_conv2d& c, std::vector<Region>& out) {
  const uint32_t ie = dtype_size(c.in_dtype), we = dtype_size(c.w_dtype),
                 oe = dtype_size(c.out_dtype);
  if (ie == 0) return bad_dtype("in_dtype", c.in_dtype);
  if (we == 0) return bad_dtype("w_dtype", c.w_dtype);
  if (oe == 0) return bad_dtype("out_dtype", c.out_dtype);
  if (c.groups == 0) return make_error(EINVAL, "field groups: must be >= 1");
  if (auto r = dense(out, kRead, c.in_addr, "in_addr", ie, c.in_h, c.in_w, c.in_c); !r) return r;
  if (auto r = dense(out, kRead, c.w_addr, "w_addr", we, c.out_c, c.k_h, c.k_w, c.in_c / c.groups);
      !r) {
    return r;
  }
  if (c.in_dtype != NPU_DTYPE_FP32) {
    if (auto r = dense(out, kRead, c.chan_addr, "chan_addr", sizeof(npu_chan_qparams), c.out_c);
        !r) {
      return r;
    }
  } else if (c.hdr.flags & NPU_MM_FLAG_BIAS) {
    if (auto r = dense(out, kRead, c.chan_addr, "chan_addr", 4, c.out_c); !r) return r;
  }
  return dense(out, kWrite, c.out_addr, "out_addr", oe, c.out_h, c.out_w, c.out_c);
}

/// A batched matrix operand: (batch-1)*batch_stride*elem + rows*cols*elem.
Expected<void> batched(std::vector<Region>& out, uint8_t access, uint32_t addr, const char* field,
                       const char* stride_field, uint64_t elem, uint32_t batch, uint32_t stride,
                       uint64_t rows, uint64_t cols) {
  if (batch == 0 || rows == 0 || cols == 0) return ok();
  uint64_t bytes = 0;
  if (!mac(bytes, batch - 1u, stride, elem)) return overflow(stride_field);
  if (!mac(bytes, rows, cols, elem)) return overflow(field);
  if (!push(out, Space::Sram, access, addr, bytes, field)) return overflow(field);
  return ok();
}

Expected<void> matmul_regions(const npu_cmd_matmul& c, std::vector<Region>& out) {
  const uint32_t ae = dtype_size(c.a_dtype), be = dtype_size(c.b_dtype),
                 oe = dtype_size(c.out_dtype);
  if (ae == 0) return bad_dtype("a_dtype", c.a_dtype);
  if (be == 0) return bad_dtype("b_dtype", c.b_dtype);
  if (oe == 0) return bad_dtype("out_dtype", c.out_dtype);
  if (auto r = batched(out, kRead, c.a_addr, "a_addr", "a_batch_stride", ae, c.batch,
                       c.a_batch_stride, c.m, c.k);
      !r) {
    return r;
  }
  if (auto r = batched(out, kRead, c.b_addr, "b_addr", "b_batch_stride", be, c.batch,
                       c.b_batch_stride, c.k, c.n);
      !r) {
    return r;
  }
  if (c.a_dtype != NPU_DTYPE_FP32) {
    if (auto r = dense(out, kRead, c.chan_addr, "chan_addr", sizeof(npu_chan_qparams), c.n); !r) {
      return r;
    }
  } else if (c.hdr.flags & NPU_MM_FLAG_BIAS) {
    if (auto r = dense(out, kRead, c.chan_addr, "chan_addr", 4, c.n); !r) return r;
  }
  return batched(out, kWrite, c.out_addr, "out_addr", "out_batch_stride", oe, c.batch,
                 c.out_batch_stride, c.m, c.n);
}

}  // namespace

Expected<void> command_regions(const npu_cmd& cmd, std::vector<Region>& out) {
  switch (cmd.hdr.opcode) {
    case NPU_OP_END:
    case NPU_OP_FENCE:
    case NPU_OP_MARKER:
    case NPU_OP_NOP:
    case NPU_OP_SEM_SIGNAL:
    case NPU_OP_SEM_WAIT:
      return ok();
    case NPU_OP_DMA_LOAD:
      return dma_regions(cmd.dma, true, out);
    case NPU_OP_DMA_STORE:
      return dma_regions(cmd.dma, false, out);
    case NPU_OP_CONV2D:
      return conv_regions(cmd.conv2d, out);
    case NPU_OP_MATMUL:
      return matmul_regions(cmd.matmul, out);
    case NPU_OP_ELTWISE: {
      const auto& c = cmd.eltwise;
      const uint32_t e = dtype_size(c.dtype);
      if (e == 0) return bad_dtype("dtype", c.dtype);
      if (auto r = vtensor(out, kRead, c.a, c.shape, e, "a.addr", "a.stride"); !r) return r;
      if (auto r = vtensor(out, kRead, c.b, c.shape, e, "b.addr", "b.stride"); !r) return r;
      return vtensor(out, kWrite, c.out, c.shape, e, "out.addr", "out.stride");
    }
    case NPU_OP_ACTIVATION: {
      const auto& c = cmd.activation;
      const uint32_t e = dtype_size(c.dtype);
      if (e == 0) return bad_dtype("dtype", c.dtype);
      if (auto r = vtensor(out, kRead, c.in, c.shape, e, "in.addr", "in.stride"); !r) return r;
      return vtensor(out, kWrite, c.out, c.shape, e, "out.addr", "out.stride");
    }
    case NPU_OP_POOL: {
      const auto& c = cmd.pool;
      const uint32_t e = dtype_size(c.dtype);
      if (e == 0) return bad_dtype("dtype", c.dtype);
      if (auto r = dense(out, kRead, c.in_addr, "in_addr", e, c.in_h, c.in_w, c.channels); !r) {
        return r;
      }
      return dense(out, kWrite, c.out_addr, "out_addr", e, c.out_h, c.out_w, c.channels);
    }
    case NPU_OP_SOFTMAX: {
      const auto& c = cmd.softmax;
      if (auto r = dense(out, kRead, c.in_addr, "in_addr", 4, c.rows, c.len); !r) return r;
      return dense(out, kWrite, c.out_addr, "out_addr", 4, c.rows, c.len);
    }
    case NPU_OP_SCALE_SHIFT: {
      const auto& c = cmd.scale_shift;
      if (auto r = dense(out, kRead, c.in_addr, "in_addr", 4, c.outer, c.channels); !r) return r;
      if (auto r = dense(out, kRead, c.scale_addr, "scale_addr", 4, c.channels); !r) return r;
      if (auto r = dense(out, kRead, c.shift_addr, "shift_addr", 4, c.channels); !r) return r;
      return dense(out, kWrite, c.out_addr, "out_addr", 4, c.outer, c.channels);
    }
    case NPU_OP_QUANTIZE:
    case NPU_OP_DEQUANTIZE: {
      const auto& c = cmd.quant;
      const uint32_t ie = dtype_size(c.in_dtype), oe = dtype_size(c.out_dtype);
      if (ie == 0) return bad_dtype("in_dtype", c.in_dtype);
      if (oe == 0) return bad_dtype("out_dtype", c.out_dtype);
      if (auto r = dense(out, kRead, c.in_addr, "in_addr", ie, c.count); !r) return r;
      if (c.channels > 1) {
        if (auto r =
                dense(out, kRead, c.params_addr, "params_addr", sizeof(npu_qparam), c.channels);
            !r) {
          return r;
        }
      }
      return dense(out, kWrite, c.out_addr, "out_addr", oe, c.count);
    }
    case NPU_OP_REQUANTIZE: {
      const auto& c = cmd.requant;
      const uint32_t ie = dtype_size(c.in_dtype), oe = dtype_size(c.out_dtype);
      if (ie == 0) return bad_dtype("in_dtype", c.in_dtype);
      if (oe == 0) return bad_dtype("out_dtype", c.out_dtype);
      if (auto r = dense(out, kRead, c.in_addr, "in_addr", ie, c.count); !r) return r;
      return dense(out, kWrite, c.out_addr, "out_addr", oe, c.count);
    }
    case NPU_OP_TRANSPOSE: {
      const auto& c = cmd.transpose;
      const auto& s = c.in_shape;
      if (auto r = dense(out, kRead, c.in_addr, "in_addr", c.elem_size, s[0], s[1], s[2], s[3]);
          !r) {
        return r;
      }
      return dense(out, kWrite, c.out_addr, "out_addr", c.elem_size, s[0], s[1], s[2], s[3]);
    }
    case NPU_OP_REDUCE: {
      const auto& c = cmd.reduce;
      if (auto r = dense(out, kRead, c.in_addr, "in_addr", 4, c.outer, c.len, c.inner); !r) {
        return r;
      }
      return dense(out, kWrite, c.out_addr, "out_addr", 4, c.outer, c.inner);
    }
    default:
      return make_error(EINVAL, "field opcode: unknown opcode " + std::to_string(cmd.hdr.opcode));
  }
}

}  // namespace npu::isa
