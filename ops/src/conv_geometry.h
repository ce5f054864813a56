// Private: an ONNX convolution (Conv, ConvInteger, QLinearConv) as the 2-D reference
// convolution sees it (1-D convolutions have height 1): its shape and the ONNX output shape
// from X, W and the attributes, and the layout changes to and from the reference's. Pure.
#pragma once

#include "npu/ref/conv.h"
#include "op_call.h"

namespace npu::ops::detail {

/// X [N, C, spatial...] and W [M, C / group, kernel...] with the attributes auto_pad, pads,
/// strides, dilations, group and kernel_shape, as the 2-D reference convolution sees them
/// (1-D convolutions have height 1), plus the ONNX output shape [N, M, spatial...].
struct ConvGeometry {
  ref::Conv2dShape s;
  Shape out_shape;
};
Expected<ConvGeometry> conv_geometry(const OpCall& c, const Shape& x, const Shape& w);

/// ONNX layouts to and from the reference's: X NC(H)W -> NHWC, W MC(H)W -> MHWC, Y NHWC -> NCHW.
Expected<NpyArray> conv_input_nhwc(const OpCall& c, const NpyArray& x, const ConvGeometry& g);
Expected<NpyArray> conv_weights_ohwi(const OpCall& c, const NpyArray& w, const ConvGeometry& g);
Expected<NpyArray> conv_output_nchw(const OpCall& c, const NpyArray& y_nhwc, const ConvGeometry& g);

}  // namespace npu::ops::detail
