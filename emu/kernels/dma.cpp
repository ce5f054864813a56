// The DMA engines' data movement: a strided 3-D box between DRAM (already translated by the
// MMU to a host pointer at dram_addr) and SRAM. Rows whose DRAM x stride equals the element
// size are copied whole (a plane's rows with one memcpy when they follow one another on both
// sides, copy_rows); other rows element by element. Padding (loads only) is filled with
// pad_value's low bytes. A box polls for a device reset at every plane and every 256 rows
// (strides may be 0, so a box that fits in SRAM can still be billions of rows).
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

/// Copies `count` rows of `bytes` bytes (the i-th at dst + i * dst_stride from src + i *
/// src_stride): one memcpy when the rows follow one another on both sides, rows of 16, 32 or 64
/// bytes as fixed-size copies the compiler inlines (a compiler's 16-channel int8 slices store
/// rows of 16 bytes: a library call each cost more than the copy), polling for a reset every
/// 256 rows. Rows may not overlap between source and destination (SRAM and DRAM never do).
void copy_rows(std::byte* dst, uint64_t dst_stride, const std::byte* src, uint64_t src_stride,
               uint64_t bytes, uint64_t count) {
  if (dst_stride == bytes && src_stride == bytes)
    return static_cast<void>(std::memcpy(dst, src, bytes * count));
  auto rows = [&]<uint64_t N>() {
    for (uint64_t y = 0; y < count; ++y) {
      if (stop_at(y)) return;
      std::memcpy(dst + y * dst_stride, src + y * src_stride, N);
    }
  };
  switch (bytes) {
    case 16:
      return rows.template operator()<16>();
    case 32:
      return rows.template operator()<32>();
    case 64:
      return rows.template operator()<64>();
    default:
      for (uint64_t y = 0; y < count; ++y) {
        if (stop_at(y)) return;
        std::memcpy(dst + y * dst_stride, src + y * src_stride, bytes);
      }
  }
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

/// A plane's data rows of a load one at a time (padded in x, converting, or strided in x):
/// false when the device was reset meanwhile.
bool load_rows(const npu_cmd_dma& c, std::byte* rows, const std::byte* src) {
  const uint32_t es = c.elem_size;
  for (uint64_t y = 0; y < c.size[1]; ++y) {
    if (stop_at(y)) return false;
    std::byte* row = rows + y * c.sram_stride[0];
    fill(row, c.pad_before[0], es, c.pad_value);
    fill(row + (uint64_t(c.pad_before[0]) + c.size[0]) * es, c.pad_after[0], es, c.pad_value);
    std::byte* dst = row + uint64_t(c.pad_before[0]) * es;
    const std::byte* s = src + y * uint64_t(c.dram_stride[1]);
    if (c.dram_dtype != 0) {
      convert_row(dst, es, c.sram_dtype, s, c.dram_stride[0], c.dram_dtype, c.size[0]);
    } else if (c.dram_stride[0] == es) {
      std::memcpy(dst, s, uint64_t(c.size[0]) * es);
    } else {
      for (uint64_t x = 0; x < c.size[0]; ++x)
        std::memcpy(dst + x * es, s + x * uint64_t(c.dram_stride[0]), es);
    }
  }
  return true;
}

}  // namespace

void dma_load(const npu_cmd_dma& c, std::span<std::byte> sram, std::byte* dram) {
  const uint32_t es = c.elem_size;
  const uint64_t px = uint64_t(c.pad_before[0]) + c.size[0] + c.pad_after[0];
  const uint64_t py = uint64_t(c.pad_before[1]) + c.size[1] + c.pad_after[1];
  const uint64_t pz = uint64_t(c.pad_before[2]) + c.size[2] + c.pad_after[2];
  const bool x_padded = (c.pad_before[0] | c.pad_after[0]) != 0;
  const bool convert = c.dram_dtype != 0;
  // Rows copied whole: same-type rows contiguous in DRAM and without padding in x.
  const bool plain = !convert && !x_padded && c.dram_stride[0] == es;
  const uint64_t row_bytes = uint64_t(c.size[0]) * es;
  std::byte* base = sram.data() + c.sram_addr;
  for (uint64_t z = 0; z < pz; ++z) {
    if (cancelled()) return;
    std::byte* plane = base + z * c.sram_stride[1];
    const bool z_in = z >= c.pad_before[2] && z < c.pad_before[2] + uint64_t(c.size[2]);
    if (!z_in) {
      for (uint64_t y = 0; y < py; ++y) fill(plane + y * c.sram_stride[0], px, es, c.pad_value);
      continue;
    }
    for (uint64_t y = 0; y < c.pad_before[1]; ++y)
      fill(plane + y * c.sram_stride[0], px, es, c.pad_value);
    std::byte* rows = plane + uint64_t(c.pad_before[1]) * c.sram_stride[0];
    const std::byte* src = dram + (z - c.pad_before[2]) * uint64_t(c.dram_stride[2]);
    if (plain) {
      copy_rows(rows, c.sram_stride[0], src, c.dram_stride[1], row_bytes, c.size[1]);
    } else if (!load_rows(c, rows, src)) {
      return;
    }
    // Rows in y order, as the reference: with a stride smaller than a row they overlap.
    for (uint64_t y = uint64_t(c.pad_before[1]) + c.size[1]; y < py; ++y)
      fill(plane + y * c.sram_stride[0], px, es, c.pad_value);
  }
}

void dma_store(const npu_cmd_dma& c, std::span<std::byte> sram, std::byte* dram) {
  const uint32_t es = c.elem_size;
  const bool convert = c.dram_dtype != 0;
  const bool contiguous_x = !convert && c.dram_stride[0] == es;
  const uint64_t row_bytes = uint64_t(c.size[0]) * es;
  const std::byte* base = sram.data() + c.sram_addr;
  for (uint64_t z = 0; z < c.size[2]; ++z) {
    if (cancelled()) return;
    const std::byte* plane = base + z * c.sram_stride[1];
    std::byte* dst_plane = dram + z * uint64_t(c.dram_stride[2]);
    if (contiguous_x) {
      copy_rows(dst_plane, c.dram_stride[1], plane, c.sram_stride[0], row_bytes, c.size[1]);
      continue;
    }
    for (uint64_t y = 0; y < c.size[1]; ++y) {
      if (stop_at(y)) return;
      const std::byte* src = plane + y * c.sram_stride[0];
      std::byte* dst = dst_plane + y * uint64_t(c.dram_stride[1]);
      if (convert) {
        convert_row(dst, c.dram_stride[0], c.dram_dtype, src, es, c.sram_dtype, c.size[0]);
      } else {
        for (uint64_t x = 0; x < c.size[0]; ++x)
          std::memcpy(dst + x * uint64_t(c.dram_stride[0]), src + x * es, es);
      }
    }
  }
}

}  // namespace npu::emu::kern
