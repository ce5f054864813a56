// DepthToSpace and SpaceToDepth (npu/ops/operators.def): moving blocks of `blocksize` x
// `blocksize` pixels between the channel dim and the spatial dims of an NCHW tensor, as a
// reshape to rank 6, a transpose (permute()) and a reshape back — the definition ONNX gives.
// DepthToSpace reads channels depth-column-row (mode "DCR", the default and the only form
// before opset 11) or column-row-depth ("CRD", opset 11 on). Any dtype: only bytes move.
#include <string>

#include "attributes.h"
#include "operands.h"
#include "permute.h"
#include "work_limits.h"

namespace npu::ops::detail {

namespace {

struct Blocks {
  const NpyArray* x = nullptr;
  int64_t bs = 1;
};

/// Input 0 (rank 4) and the blocksize attribute (>= 1).
Expected<Blocks> blocks(const OpCall& c) {
  auto x = input(c, 0);
  if (!x) return x.error();
  if ((*x)->shape.size() != 4) {
    return op_error(c, "input must have rank 4 (NCHW), got " + shape_text((*x)->shape));
  }
  auto bs = required_int_attr(c, "blocksize");
  if (!bs) return bs.error();
  if (*bs < 1) return op_error(c, "blocksize " + std::to_string(*bs) + " must be >= 1");
  return Blocks{*x, *bs};
}

/// x seen as `shape6`, permuted by `perm`, seen as `out_shape`.
HostOutputs rearrange(const OpCall& c, const NpyArray& x, Shape shape6,
                      const std::vector<int64_t>& perm, Shape out_shape) {
  NPU_TRY(check_output(c, x.dtype, out_shape));
  NpyArray view{x.dtype, std::move(shape6), x.data};
  auto y = permute(c, view, perm);
  if (!y) return y.error();
  y->shape = std::move(out_shape);
  return single(std::move(*y));
}

}  // namespace

HostOutputs depth_to_space(const OpCall& c) {
  auto b = blocks(c);
  if (!b) return b.error();
  const Shape& s = b->x->shape;
  const int64_t bs = b->bs, n = s[0], ch = s[1], h = s[2], w = s[3];
  int64_t bs2 = 0, oh = 0, ow = 0;
  if (__builtin_mul_overflow(bs, bs, &bs2) || __builtin_mul_overflow(h, bs, &oh) ||
      __builtin_mul_overflow(w, bs, &ow)) {
    return op_error(c, "blocksize " + std::to_string(bs) + " is too large");
  }
  if (ch % bs2 != 0) {
    return op_error(c, "channels " + std::to_string(ch) + " are not a multiple of blocksize^2 " +
                           std::to_string(bs2));
  }
  auto mode = string_attr(c, "mode");
  if (!mode) return mode.error();
  if (c.opset < 11 && c.attrs.contains("mode")) {
    return op_error(c, "attribute mode needs opset 11, the model has " + std::to_string(c.opset));
  }
  const int64_t oc = ch / bs2;
  if (*mode == "DCR") {
    return rearrange(c, *b->x, {n, bs, bs, oc, h, w}, {0, 3, 4, 1, 5, 2}, {n, oc, oh, ow});
  }
  if (*mode == "CRD") {
    return rearrange(c, *b->x, {n, oc, bs, bs, h, w}, {0, 1, 4, 2, 5, 3}, {n, oc, oh, ow});
  }
  return op_error(c, "mode '" + *mode + "' is not supported (DCR or CRD)");
}

HostOutputs space_to_depth(const OpCall& c) {
  auto b = blocks(c);
  if (!b) return b.error();
  const Shape& s = b->x->shape;
  const int64_t bs = b->bs, n = s[0], ch = s[1], h = s[2], w = s[3];
  if (h % bs != 0 || w % bs != 0) {
    return op_error(c, "spatial dims " + std::to_string(h) + "x" + std::to_string(w) +
                           " are not multiples of blocksize " + std::to_string(bs));
  }
  int64_t oc = 0;
  if (__builtin_mul_overflow(ch, bs, &oc) || __builtin_mul_overflow(oc, bs, &oc)) {
    return op_error(c, "blocksize " + std::to_string(bs) + " is too large");
  }
  return rearrange(c, *b->x, {n, ch, h / bs, bs, w / bs, bs}, {0, 3, 5, 1, 2, 4},
                   {n, oc, h / bs, w / bs});
}

}  // namespace npu::ops::detail
