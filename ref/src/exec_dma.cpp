// The reference DMA: DMA_LOAD / DMA_STORE move a strided 3-D box element by element between
// the flat DRAM and SRAM, padding loads with pad_value. A converting DMA (ISA 1.1: dram_dtype
// and sram_dtype set) converts each element from the source's float type to the
// destination's through npu/isa/half.h.
#include <array>

#include "exec.h"
#include "npu/isa/dtype.h"
#include "npu/isa/half.h"
#include "npu/isa/opcodes.h"

namespace npu::ref::detail {
namespace {

/// Byte extent of a 3-D box: (n[2]-1)*st[2] + (n[1]-1)*st[1] + (n[0]-1)*st[0] + es, each
/// n >= 1. False on overflow.
bool extent3(const uint64_t (&n)[3], const std::array<uint64_t, 3>& st, uint64_t es,
             uint64_t& out) {
  uint64_t total = es;
  for (int d = 0; d < 3; ++d) {
    uint64_t term = 0;
    if (n[d] == 0 || __builtin_mul_overflow(n[d] - 1, st[d], &term) ||
        __builtin_add_overflow(total, term, &total)) {
      return false;
    }
  }
  out = total;
  return true;
}

/// One element of float dtype `from` at `src` as fp32 (widening is exact).
float load_float(uint8_t from, const std::byte* src) {
  if (from == NPU_DTYPE_FP32) {
    float f;
    std::memcpy(&f, src, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, src, 2);
  return isa::half_to_fp32(from, h);
}

/// Converts one element from float dtype `from` at `src` to `to` at `dst`; the same dtype on
/// both sides copies the bits.
void convert_element(uint8_t from, const std::byte* src, uint8_t to, std::byte* dst) {
  if (from == to) {
    std::memmove(dst, src, isa::dtype_size(from));
    return;
  }
  const float f = load_float(from, src);
  if (to == NPU_DTYPE_FP32) {
    std::memcpy(dst, &f, 4);
    return;
  }
  const uint16_t h = isa::fp32_to_half(to, f);
  std::memcpy(dst, &h, 2);
}

}  // namespace

Expected<void> exec_dma(const npu_cmd_dma& c, std::span<std::byte> sram, FlatDram& dram) {
  const bool load = c.hdr.opcode == NPU_OP_DMA_LOAD;
  const char* op = isa::opcode_name(c.hdr.opcode);
  const uint64_t es = c.elem_size;
  if (es != 1 && es != 2 && es != 4) {
    return make_error(EINVAL,
                      at(op, "elem_size") + ": expected 1, 2 or 4, got " + std::to_string(es));
  }
  for (int d = 0; d < 3; ++d) {
    if (c.size[d] == 0) return make_error(EINVAL, at(op, "size") + ": must be >= 1");
  }
  const bool convert = c.dram_dtype != 0 || c.sram_dtype != 0;
  if (convert) {
    for (uint8_t d : {c.dram_dtype, c.sram_dtype}) {
      if (!isa::dtype_is_float(d)) {
        return make_error(EINVAL, at(op, "dram_dtype/sram_dtype") +
                                      ": expected fp32, fp16 or bf16 on both sides, got " +
                                      std::to_string(d));
      }
    }
    if (es != isa::dtype_size(c.sram_dtype)) {
      return make_error(EINVAL, at(op, "elem_size") + ": expected the size of sram_dtype " +
                                    isa::dtype_name(c.sram_dtype) + ", got " + std::to_string(es));
    }
  }
  const uint64_t des = convert ? isa::dtype_size(c.dram_dtype) : es;  // DRAM element size
  if (!load) {
    for (int d = 0; d < 3; ++d) {
      if (c.pad_before[d] != 0 || c.pad_after[d] != 0) {
        return make_error(EINVAL, at(op, "pad_before/pad_after") + ": must be 0 for a store");
      }
    }
  }
  // SRAM box (with padding) and DRAM box, and their byte extents (overflow-checked).
  uint64_t box[3];
  for (int d = 0; d < 3; ++d) box[d] = uint64_t{c.size[d]} + c.pad_before[d] + c.pad_after[d];
  uint64_t sram_bytes = 0;
  uint64_t dram_bytes = 0;
  if (!extent3(box, {es, c.sram_stride[0], c.sram_stride[1]}, es, sram_bytes)) {
    return make_error(EINVAL, at(op, "sram_stride") + ": box extent overflows");
  }
  const uint64_t size[3] = {c.size[0], c.size[1], c.size[2]};
  if (!extent3(size, {c.dram_stride[0], c.dram_stride[1], c.dram_stride[2]}, des, dram_bytes)) {
    return make_error(EINVAL, at(op, "dram_stride") + ": box extent overflows");
  }
  if (auto r = check_sram(sram, c.sram_addr, sram_bytes, at(op, "sram_addr")); !r) return r;
  auto mem = dram.lookup(c.dram_addr, dram_bytes);
  if (!mem) return make_error(mem.error().code, at(op, "dram_addr") + ": " + mem.error().message);
  // Writes that cannot all be distinct overlap; refusing them also bounds the loop by the
  // destination's size.
  const uint64_t(&n)[3] = load ? box : size;
  uint64_t written = 0;
  const bool too_many = __builtin_mul_overflow(n[0], n[1], &written) ||
                        __builtin_mul_overflow(written, n[2], &written);
  const uint64_t dest_bytes = load ? sram_bytes : dram_bytes;
  if (too_many || written > dest_bytes / (load ? es : des)) {
    return make_error(
        EINVAL, at(op, load ? "sram_stride" : "dram_stride") + ": destination elements overlap");
  }
  std::byte pad[4];
  for (uint64_t i = 0; i < 4; ++i) pad[i] = static_cast<std::byte>((c.pad_value >> (8 * i)) & 0xff);

  for (uint64_t z = 0; z < box[2]; ++z) {
    for (uint64_t y = 0; y < box[1]; ++y) {
      for (uint64_t x = 0; x < box[0]; ++x) {
        std::byte* s =
            sram.data() + c.sram_addr + z * c.sram_stride[1] + y * c.sram_stride[0] + x * es;
        const bool inside = z >= c.pad_before[2] && z < c.pad_before[2] + uint64_t{c.size[2]} &&
                            y >= c.pad_before[1] && y < c.pad_before[1] + uint64_t{c.size[1]} &&
                            x >= c.pad_before[0] && x < c.pad_before[0] + uint64_t{c.size[0]};
        if (!inside) {
          std::memcpy(s, pad, es);
          continue;
        }
        std::byte* d = mem->data() + (z - c.pad_before[2]) * c.dram_stride[2] +
                       (y - c.pad_before[1]) * c.dram_stride[1] +
                       (x - c.pad_before[0]) * c.dram_stride[0];
        if (convert) {
          if (load) {
            convert_element(c.dram_dtype, d, c.sram_dtype, s);
          } else {
            convert_element(c.sram_dtype, s, c.dram_dtype, d);
          }
        } else if (load) {
          std::memmove(s, d, es);
        } else {
          std::memmove(d, s, es);
        }
      }
    }
  }
  return ok();
}

}  // namespace npu::ref::detail
