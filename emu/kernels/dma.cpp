// The DMA engines' data movement: a strided 3-D box between DRAM (already translated by the
// MMU to a host pointer at dram_addr) and SRAM. Rows whose DRAM x stride equals the element
// size are copied with one memcpy; other rows element by element. Padding (loads only) is
// filled with pad_value's low bytes. A box of many rows polls for a device reset every 256
// rows (strides may be 0, so a box that fits in SRAM can still be billions of rows).
// A converting DMA (ISA 1.1: dram_dtype/sram_dtype set) converts each row element by element
// through npu/isa/half.h, bit-exact with the reference (contiguous fp32 <-> half rows through
// half_convert.h's vector loops, which give the same bits).
#include <cstdint>
#include <cstring>

#include "cancel.h"
#include "half_convert.h"
#include "npu/isa/dtype.h"
#include "npu/isa/half.h"
#include "ops.h"
#include "sram.h"

namespace npu::emu::kern {
namespace {

/// True every 256th row once the device was reset (the job stops; its data is undefined).
bool stop_at(uint64_t row) {
  return (row & 255) == 255 && cancelled();
}

void fill(std::byte* dst, uint64_t elems, uint32_t elem_size, uint32_t value) {
  if (elem_size == 1) {
    std::memset(dst, static_cast<int>(value & 0xff), elems);
    return;
  }
  for (uint64_t i = 0; i < elems; ++i) std::memcpy(dst + i * elem_size, &value, elem_size);
}

/// Converts `n` elements of float dtype `from` (element stride `src_stride` bytes) into
/// dtype `to` (stride `dst_stride`). The same dtype on both sides copies the bits.
void convert_row(std::byte* dst, uint64_t dst_stride, uint8_t to, const std::byte* src,
                 uint64_t src_stride, uint8_t from, uint64_t n) {
  if (from == to) {
    const uint32_t es = isa::dtype_size(from);
    if (src_stride == es && dst_stride == es)
      return static_cast<void>(std::memcpy(dst, src, n * es));
    for (uint64_t x = 0; x < n; ++x) std::memcpy(dst + x * dst_stride, src + x * src_stride, es);
    return;
  }
  // Contiguous rows between fp32 and a half type: the vector loops of half_convert.h.
  const uint32_t from_size = isa::dtype_size(from), to_size = isa::dtype_size(to);
  if (src_stride == from_size && dst_stride == to_size) {
    if (from == NPU_DTYPE_FP32 && to_size == 2) return narrow_half(src, to, n, dst);
    if (to == NPU_DTYPE_FP32 && from_size == 2) return widen_half(src, from, n, dst);
  }
  for (uint64_t x = 0; x < n; ++x) {
    const std::byte* s = src + x * src_stride;
    const float f =
        from == NPU_DTYPE_FP32 ? ld<float>(s) : isa::half_to_fp32(from, ld<uint16_t>(s));
    std::byte* d = dst + x * dst_stride;
    if (to == NPU_DTYPE_FP32)
      st<float>(d, f);
    else
      st<uint16_t>(d, isa::fp32_to_half(to, f));
  }
}

}  // namespace

void dma_load(const npu_cmd_dma& c, std::span<std::byte> sram, std::byte* dram) {
  const uint32_t es = c.elem_size;
  const uint64_t px = uint64_t(c.pad_before[0]) + c.size[0] + c.pad_after[0];
  const uint64_t py = uint64_t(c.pad_before[1]) + c.size[1] + c.pad_after[1];
  const uint64_t pz = uint64_t(c.pad_before[2]) + c.size[2] + c.pad_after[2];
  const bool padded = (c.pad_before[0] | c.pad_before[1] | c.pad_before[2] | c.pad_after[0] |
                       c.pad_after[1] | c.pad_after[2]) != 0;
  const bool convert = c.dram_dtype != 0;
  const bool contiguous_x = !convert && c.dram_stride[0] == es;
  std::byte* base = sram.data() + c.sram_addr;
  uint64_t rows = 0;
  for (uint64_t z = 0; z < pz; ++z) {
    const bool z_in = z >= c.pad_before[2] && z < c.pad_before[2] + uint64_t(c.size[2]);
    for (uint64_t y = 0; y < py; ++y) {
      if (stop_at(rows++)) return;
      std::byte* row = base + z * c.sram_stride[1] + y * c.sram_stride[0];
      const bool y_in = y >= c.pad_before[1] && y < c.pad_before[1] + uint64_t(c.size[1]);
      if (!z_in || !y_in) {
        fill(row, px, es, c.pad_value);
        continue;
      }
      if (padded) {
        fill(row, c.pad_before[0], es, c.pad_value);
        fill(row + (uint64_t(c.pad_before[0]) + c.size[0]) * es, c.pad_after[0], es, c.pad_value);
      }
      std::byte* dst = row + uint64_t(c.pad_before[0]) * es;
      const std::byte* src = dram + (z - c.pad_before[2]) * uint64_t(c.dram_stride[2]) +
                             (y - c.pad_before[1]) * uint64_t(c.dram_stride[1]);
      if (convert) {
        convert_row(dst, es, c.sram_dtype, src, c.dram_stride[0], c.dram_dtype, c.size[0]);
      } else if (contiguous_x) {
        std::memcpy(dst, src, uint64_t(c.size[0]) * es);
      } else {
        for (uint64_t x = 0; x < c.size[0]; ++x)
          std::memcpy(dst + x * es, src + x * uint64_t(c.dram_stride[0]), es);
      }
    }
  }
}

void dma_store(const npu_cmd_dma& c, std::span<std::byte> sram, std::byte* dram) {
  const uint32_t es = c.elem_size;
  const bool convert = c.dram_dtype != 0;
  const bool contiguous_x = !convert && c.dram_stride[0] == es;
  const std::byte* base = sram.data() + c.sram_addr;
  uint64_t rows = 0;
  for (uint64_t z = 0; z < c.size[2]; ++z) {
    for (uint64_t y = 0; y < c.size[1]; ++y) {
      if (stop_at(rows++)) return;
      const std::byte* src = base + z * c.sram_stride[1] + y * c.sram_stride[0];
      std::byte* dst = dram + z * uint64_t(c.dram_stride[2]) + y * uint64_t(c.dram_stride[1]);
      if (convert) {
        convert_row(dst, c.dram_stride[0], c.dram_dtype, src, es, c.sram_dtype, c.size[0]);
      } else if (contiguous_x) {
        std::memcpy(dst, src, uint64_t(c.size[0]) * es);
      } else {
        for (uint64_t x = 0; x < c.size[0]; ++x)
          std::memcpy(dst + x * uint64_t(c.dram_stride[0]), src + x * es, es);
      }
    }
  }
}

}  // namespace npu::emu::kern
