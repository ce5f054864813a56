// MatMul geometry (matmul_geometry.h).
#include "matmul_geometry.h"

#include <limits>
#include <string>

#include "broadcasting.h"
#include "work_limits.h"

namespace npu::ops::detail {

Expected<MatmulGeometry> matmul_geometry(const OpCall& c, const Shape& a_shape,
                                         const Shape& b_shape) {
  Shape sa = a_shape, sb = b_shape;
  if (sa.empty() || sb.empty()) return op_error(c, "inputs must have rank >= 1");
  const bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  MatmulGeometry g;
  g.m = sa[sa.size() - 2];
  g.k = sa.back();
  g.n = sb.back();
  if (sb[sb.size() - 2] != g.k) {
    return op_error(c, "shapes " + shape_text(a_shape) + " and " + shape_text(b_shape) +
                           " do not match (inner dims " + std::to_string(g.k) + " and " +
                           std::to_string(sb[sb.size() - 2]) + ")");
  }
  const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  auto batch = broadcast(c, ba, bb);
  if (!batch) return batch.error();
  g.batch = *batch;
  g.a_strides = broadcast_strides(ba, g.batch);
  g.b_strides = broadcast_strides(bb, g.batch);
  g.out_shape = g.batch;
  if (!a_vec) g.out_shape.push_back(g.m);
  if (!b_vec) g.out_shape.push_back(g.n);
  for (int64_t d : {g.m, g.k, g.n}) {
    if (d > std::numeric_limits<uint32_t>::max()) return op_error(c, "dimension too large");
  }
  NPU_TRY(check_work(c, count(g.out_shape), g.k, "multiply-accumulates"));
  return g;
}

}  // namespace npu::ops::detail
