// The flat-range tiler shared by the vector ops whose tensors are contiguous: tiles are
// chunks of whole "rows" (align elements) of the flattened tensor, double-buffered through
// the tile pipeline, with optional constants loaded once before the first tile.
#pragma once

#include "internal.h"

namespace npu::codegen::detail {

struct FlatSpec {
  std::string op, name;
  uint64_t count = 0;  // elements of the input (and of the output unless out_per_row differs)
  uint32_t e_in = 4, e_out = 4;            // SRAM element bytes
  uint32_t dram_e_in = 0, dram_e_out = 0;  // DRAM element bytes (0: as in SRAM)
  Convert cvt_in, cvt_out;                 // DMA conversions
  uint64_t in_va = 0, out_va = 0;
  uint64_t align = 1;        // tile sizes are multiples of this many input elements
  uint64_t out_align = 0;    // output elements per `align` input elements (0: same as align)
  uint64_t const_bytes = 0;  // constants loaded once (before tile 0)
  std::function<Expected<void>(isa::CommandBufferBuilder&, uint32_t const_addr)> load_consts;
  /// Emits the vector command(s) for input elements [first, first + n).
  std::function<void(isa::CommandBufferBuilder&, uint64_t first, uint64_t n, uint32_t in,
                     uint32_t out, uint32_t consts)>
      compute;
};

Expected<LayerReport> emit_flat(EmitContext& ctx, const FlatSpec& spec);

/// Sets the spec's addresses, element sizes and conversions from the layer's tensors.
void flat_io(FlatSpec& s, const TensorDesc& in, const TensorDesc& out);

/// "op name: input and output must be contiguous" unless both are.
Expected<void> require_contiguous(const std::string& op, const std::string& name,
                                  const TensorDesc& in, const TensorDesc& out);

}  // namespace npu::codegen::detail
