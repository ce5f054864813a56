// The REGIONS column of the opcode table: the byte ranges each operand of a data command
// reads or writes (docs/isa.md). command_regions() dispatches through npu/isa/opcodes.def.
#include "npu/isa/regions.h"

#include <array>
#include <string>
#include <utility>

#include "common.h"
#include "semantics.h"

namespace npu::isa {
namespace detail {
namespace {

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
  return mul(a, b, p) && mul(p, c, p) && add(acc, p, acc);
}

/// Appends [begin, begin + bytes) unless empty; false when the end overflows.
bool push(std::vector<Region>& out, Space space, uint8_t access, uint64_t begin, uint64_t bytes,
          const char* field) {
  if (bytes == 0) return true;
  uint64_t end;
  if (!add(begin, bytes, end)) return false;
  out.push_back(Region{space, access, begin, end, field});
  return true;
}

/// A contiguous operand of `count` elements of `elem` bytes: count = n0 * n1 * n2 * n3.
Expected<void> dense(std::vector<Region>& out, uint8_t access, uint64_t addr, const char* field,
                     uint64_t elem, uint64_t n0, uint64_t n1 = 1, uint64_t n2 = 1,
                     uint64_t n3 = 1) {
  uint64_t bytes = 0;
  uint64_t p;
  if (!mul(n0, n1, p) || !mul(p, n2, p) || !mul(p, n3, p) || !mac(bytes, p, elem)) {
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
  if (!mac(bytes, span, elem) || !add(bytes, elem, bytes)) return overflow(stride_field);
  if (!push(out, Space::Sram, access, t.addr, bytes, field)) return overflow(stride_field);
  return ok();
}

/// Reads the integer channel params (or, in the float modes with NPU_MM_FLAG_BIAS, the float
/// bias: fp32, and the fp16/bf16 modes of ISA 1.1) of `channels` output channels at chan_addr.
Expected<void> chan_params(std::vector<Region>& out, uint8_t in_dtype, uint16_t flags,
                           uint32_t chan_addr, uint64_t channels) {
  if (!dtype_is_float(in_dtype)) {
    return dense(out, kRead, chan_addr, "chan_addr", sizeof(npu_chan_qparams), channels);
  }
  if (flags & NPU_MM_FLAG_BIAS) return dense(out, kRead, chan_addr, "chan_addr", 4, channels);
  return ok();
}

/// Element sizes of the named dtype fields, or the error naming the first unknown one.
template <size_t N>
Expected<std::array<uint32_t, N>> sizes_of(const std::pair<const char*, uint8_t> (&dtypes)[N]) {
  std::array<uint32_t, N> sizes{};
  for (size_t i = 0; i < N; ++i) {
    sizes[i] = dtype_size(dtypes[i].second);
    if (sizes[i] == 0) return bad_dtype(dtypes[i].first, dtypes[i].second);
  }
  return sizes;
}

/// A DMA's DRAM side `r` as rows (Region::pitch) when x is contiguous and z, with more than one
/// plane, continues y's rows at the same pitch.
void dram_rows(const npu_cmd_dma& c, uint64_t elem, Region& r) {
  const uint64_t width = uint64_t{c.size[0]} * elem;
  uint64_t pitch = c.size[1] > 1 ? c.dram_stride[1] : c.size[2] > 1 ? c.dram_stride[2] : 0;
  if (c.size[1] > 1 && c.size[2] > 1 && c.dram_stride[2] != uint64_t{c.size[1]} * c.dram_stride[1])
    pitch = 0;
  if (c.dram_stride[0] != elem || pitch <= width || pitch > UINT32_MAX) return;
  r.pitch = static_cast<uint32_t>(pitch);
  r.width = static_cast<uint32_t>(width);
}

}  // namespace

Expected<void> regions_dma(const npu_cmd_dma& c, std::vector<Region>& out) {
  const bool load = c.hdr.opcode == NPU_OP_DMA_LOAD;
  static constexpr const char* kDramStride[3] = {"dram_stride[0]", "dram_stride[1]",
                                                 "dram_stride[2]"};
  static constexpr const char* kSramStride[2] = {"sram_stride[0]", "sram_stride[1]"};
  for (uint32_t s : c.size) {
    if (s == 0) return ok();
  }
  // DRAM side: the box itself, fully strided.
  uint64_t dram_bytes = 0;
  for (int i = 0; i < 3; ++i) {
    if (!mac(dram_bytes, c.size[i] - 1u, c.dram_stride[i])) return overflow(kDramStride[i]);
  }
  // A converting DMA's DRAM elements have dram_dtype's size (since 1.1).
  const uint32_t dram_elem = c.dram_dtype != 0 ? dtype_size(c.dram_dtype) : c.elem_size;
  if (!add(dram_bytes, dram_elem, dram_bytes)) return overflow("dram_stride");
  // SRAM side: the (padded) box, x contiguous, y/z strided.
  uint64_t dims[3];
  for (int i = 0; i < 3; ++i) {
    dims[i] = uint64_t{c.size[i]} + (load ? uint64_t{c.pad_before[i]} + c.pad_after[i] : 0);
  }
  uint64_t sram_bytes = 0;
  if (!mac(sram_bytes, dims[1] - 1, c.sram_stride[0])) return overflow(kSramStride[0]);
  if (!mac(sram_bytes, dims[2] - 1, c.sram_stride[1])) return overflow(kSramStride[1]);
  if (!mac(sram_bytes, dims[0], c.elem_size)) return overflow("size[0]");

  struct Side {
    Space space;
    uint8_t access;
    uint64_t addr, bytes;
    const char* field;
  };
  const Side dram{Space::Dram, load ? kRead : kWrite, c.dram_addr, dram_bytes, "dram_addr"};
  const Side sram{Space::Sram, load ? kWrite : kRead, c.sram_addr, sram_bytes, "sram_addr"};
  for (const Side& s : load ? std::array{dram, sram} : std::array{sram, dram}) {  // source first
    const size_t before = out.size();
    if (!push(out, s.space, s.access, s.addr, s.bytes, s.field)) return overflow(s.field);
    if (s.space == Space::Dram && out.size() > before) dram_rows(c, dram_elem, out.back());
  }
  return ok();
}

Expected<void> regions_conv2d(const npu_cmd_conv2d& c, std::vector<Region>& out) {
  auto e = sizes_of({{"in_dtype", c.in_dtype}, {"w_dtype", c.w_dtype}, {"out_dtype", c.out_dtype}});
  if (!e) return e.error();
  const auto [ie, we, oe] = *e;
  if (c.groups == 0) return make_error(EINVAL, "field groups: must be >= 1");
  NPU_TRY(dense(out, kRead, c.in_addr, "in_addr", ie, c.in_h, c.in_w, c.in_c));
  NPU_TRY(dense(out, kRead, c.w_addr, "w_addr", we, c.out_c, c.k_h, c.k_w, c.in_c / c.groups));
  NPU_TRY(chan_params(out, c.in_dtype, c.hdr.flags, c.chan_addr, c.out_c));
  return dense(out, kWrite, c.out_addr, "out_addr", oe, c.out_h, c.out_w, c.out_c);
}

namespace {

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

}  // namespace

Expected<void> regions_matmul(const npu_cmd_matmul& c, std::vector<Region>& out) {
  auto e = sizes_of({{"a_dtype", c.a_dtype}, {"b_dtype", c.b_dtype}, {"out_dtype", c.out_dtype}});
  if (!e) return e.error();
  const auto [ae, be, oe] = *e;
  NPU_TRY(batched(out, kRead, c.a_addr, "a_addr", "a_batch_stride", ae, c.batch, c.a_batch_stride,
                  c.m, c.k));
  NPU_TRY(batched(out, kRead, c.b_addr, "b_addr", "b_batch_stride", be, c.batch, c.b_batch_stride,
                  c.k, c.n));
  NPU_TRY(chan_params(out, c.a_dtype, c.hdr.flags, c.chan_addr, c.n));
  return batched(out, kWrite, c.out_addr, "out_addr", "out_batch_stride", oe, c.batch,
                 c.out_batch_stride, c.m, c.n);
}

Expected<void> regions_eltwise(const npu_cmd_eltwise& c, std::vector<Region>& out) {
  auto e = sizes_of({{"dtype", c.dtype}});
  if (!e) return e.error();
  NPU_TRY(vtensor(out, kRead, c.a, c.shape, (*e)[0], "a.addr", "a.stride"));
  NPU_TRY(vtensor(out, kRead, c.b, c.shape, (*e)[0], "b.addr", "b.stride"));
  return vtensor(out, kWrite, c.out, c.shape, (*e)[0], "out.addr", "out.stride");
}

Expected<void> regions_activation(const npu_cmd_activation& c, std::vector<Region>& out) {
  auto e = sizes_of({{"dtype", c.dtype}});
  if (!e) return e.error();
  NPU_TRY(vtensor(out, kRead, c.in, c.shape, (*e)[0], "in.addr", "in.stride"));
  return vtensor(out, kWrite, c.out, c.shape, (*e)[0], "out.addr", "out.stride");
}

Expected<void> regions_pool(const npu_cmd_pool& c, std::vector<Region>& out) {
  auto e = sizes_of({{"dtype", c.dtype}});
  if (!e) return e.error();
  NPU_TRY(dense(out, kRead, c.in_addr, "in_addr", (*e)[0], c.in_h, c.in_w, c.channels));
  return dense(out, kWrite, c.out_addr, "out_addr", (*e)[0], c.out_h, c.out_w, c.channels);
}

Expected<void> regions_softmax(const npu_cmd_softmax& c, std::vector<Region>& out) {
  NPU_TRY(dense(out, kRead, c.in_addr, "in_addr", 4, c.rows, c.len));
  return dense(out, kWrite, c.out_addr, "out_addr", 4, c.rows, c.len);
}

Expected<void> regions_scale_shift(const npu_cmd_scale_shift& c, std::vector<Region>& out) {
  NPU_TRY(dense(out, kRead, c.in_addr, "in_addr", 4, c.outer, c.channels));
  NPU_TRY(dense(out, kRead, c.scale_addr, "scale_addr", 4, c.channels));
  NPU_TRY(dense(out, kRead, c.shift_addr, "shift_addr", 4, c.channels));
  return dense(out, kWrite, c.out_addr, "out_addr", 4, c.outer, c.channels);
}

Expected<void> regions_quant(const npu_cmd_quant& c, std::vector<Region>& out) {
  auto e = sizes_of({{"in_dtype", c.in_dtype}, {"out_dtype", c.out_dtype}});
  if (!e) return e.error();
  NPU_TRY(dense(out, kRead, c.in_addr, "in_addr", (*e)[0], c.count));
  if (c.channels > 1) {
    NPU_TRY(dense(out, kRead, c.params_addr, "params_addr", sizeof(npu_qparam), c.channels));
  }
  return dense(out, kWrite, c.out_addr, "out_addr", (*e)[1], c.count);
}

Expected<void> regions_requant(const npu_cmd_requant& c, std::vector<Region>& out) {
  auto e = sizes_of({{"in_dtype", c.in_dtype}, {"out_dtype", c.out_dtype}});
  if (!e) return e.error();
  NPU_TRY(dense(out, kRead, c.in_addr, "in_addr", (*e)[0], c.count));
  return dense(out, kWrite, c.out_addr, "out_addr", (*e)[1], c.count);
}

Expected<void> regions_transpose(const npu_cmd_transpose& c, std::vector<Region>& out) {
  const auto& s = c.in_shape;
  NPU_TRY(dense(out, kRead, c.in_addr, "in_addr", c.elem_size, s[0], s[1], s[2], s[3]));
  return dense(out, kWrite, c.out_addr, "out_addr", c.elem_size, s[0], s[1], s[2], s[3]);
}

Expected<void> regions_reduce(const npu_cmd_reduce& c, std::vector<Region>& out) {
  NPU_TRY(dense(out, kRead, c.in_addr, "in_addr", 4, c.outer, c.len, c.inner));
  return dense(out, kWrite, c.out_addr, "out_addr", 4, c.outer, c.inner);
}

Expected<void> regions_moments(const npu_cmd_moments& c, std::vector<Region>& out) {
  NPU_TRY(dense(out, kRead, c.in_addr, "in_addr", 4, c.outer, c.len, c.inner));
  NPU_TRY(dense(out, kWrite, c.mean_addr, "mean_addr", 4, c.outer, c.inner));
  return dense(out, kWrite, c.sq_addr, "sq_addr", 4, c.outer, c.inner);
}

}  // namespace detail

Expected<void> command_regions(const npu_cmd& cmd, std::vector<Region>& out) {
  switch (cmd.hdr.opcode) {
// Control commands touch no memory.
#define NPU_CONTROL(VALUE, ID, ...) \
  case NPU_OP_##ID:                 \
    return ok();
#define NPU_DATA(VALUE, ID, MNEMONIC, ENGINES, PAYLOAD, FLAGS, CHECK, FEATURES, REGIONS, ...) \
  case NPU_OP_##ID:                                                                           \
    return detail::REGIONS(cmd.PAYLOAD, out);
#include "npu/isa/opcodes.def"
    default:
      return make_error(EINVAL, "field opcode: unknown opcode " + std::to_string(cmd.hdr.opcode));
  }
}

}  // namespace npu::isa
