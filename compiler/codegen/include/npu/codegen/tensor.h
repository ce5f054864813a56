// TensorDesc: a tensor in device DRAM as the code generator sees it (device VA, element type,
// dims outermost first, byte strides). Activations are NHWC, conv weights OHWI. `dtype` is
// the element type in DRAM; `sram_dtype`, when set, is the type the layer computes on in SRAM
// (the DMA converts on load and store: an fp16 tensor the vector engine reads as fp32, an
// fp32 graph input the matrix engine reads as fp16). Strides and sizes are DRAM bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npu/format/shape.h"
#include "npu/isa/dtype.h"
#include "npu_isa.h"

namespace npu::codegen {

struct TensorDesc {
  uint64_t va = 0;                 // device VA of element [0, 0, ...]
  uint8_t dtype = NPU_DTYPE_FP32;  // NPU_DTYPE_*
  std::vector<uint32_t> dims;      // outermost first (NHWC, OHWI, [M][K], ...)
  std::vector<uint64_t> strides;   // bytes per step of each dim; empty = contiguous
  uint8_t sram_dtype = 0;          // NPU_DTYPE_* in SRAM when the DMA converts; 0: dtype

  /// A contiguous tensor.
  static TensorDesc make(uint64_t va, uint8_t dtype, std::vector<uint32_t> dims) {
    return TensorDesc{va, dtype, std::move(dims), {}};
  }

  uint32_t elem_size() const { return isa::dtype_size(dtype); }
  /// The element type the layer computes on (in SRAM).
  uint8_t compute_dtype() const { return sram_dtype ? sram_dtype : dtype; }
  uint32_t sram_elem_size() const { return isa::dtype_size(compute_dtype()); }
  /// A view computed on in `t` (the DMA converts when t differs from the DRAM dtype).
  TensorDesc computed_as(uint8_t t) const {
    TensorDesc d = *this;
    d.sram_dtype = t == dtype ? 0 : t;
    return d;
  }
  /// The vector engine's view: half-precision tensors computed on as fp32.
  TensorDesc widened() const {
    return isa::dtype_is_half(dtype) ? computed_as(NPU_DTYPE_FP32) : *this;
  }
  size_t rank() const { return dims.size(); }
  uint32_t dim(size_t i) const { return dims.at(i); }
  /// Byte stride of dim i (the contiguous one when strides is empty).
  uint64_t stride(size_t i) const {
    if (!strides.empty()) return strides.at(i);
    uint64_t s = elem_size();
    for (size_t k = i + 1; k < dims.size(); ++k) s *= dims[k];
    return s;
  }
  uint64_t elements() const {
    uint64_t n = 1;
    for (uint32_t d : dims) n *= d;
    return n;
  }
  uint64_t bytes() const { return elements() * elem_size(); }
  bool contiguous() const {
    for (size_t i = 0; i < dims.size(); ++i) {
      uint64_t s = elem_size();
      for (size_t k = i + 1; k < dims.size(); ++k) s *= dims[k];
      if (dims[i] > 1 && stride(i) != s) return false;
    }
    return true;
  }
  /// "[1, 56, 56, 64] int8".
  std::string str() const {
    const std::vector<int64_t> d(dims.begin(), dims.end());
    std::string s = format::shape_text(d) + " " + isa::dtype_name(dtype);
    if (sram_dtype) s += std::string(" as ") + isa::dtype_name(sram_dtype);
    return s;
  }
};

}  // namespace npu::codegen
