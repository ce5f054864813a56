// Reference 4-D transpose (NPU_OP_TRANSPOSE semantics): a contiguous input permuted into a
// contiguous output with dims in_shape[perm[0..3]], for any element type.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "npu/expected.h"
#include "npu/ref/tensor.h"

namespace npu::ref {

/// Error unless perm is a permutation of {0, 1, 2, 3}.
inline Expected<void> check_perm(const std::array<uint8_t, 4>& perm) {
  std::array<bool, 4> seen{};
  for (uint8_t p : perm) {
    if (p > 3 || seen[p]) return make_error(EINVAL, "transpose: perm is not a permutation of 0..3");
    seen[p] = true;
  }
  return ok();
}

/// Output dims: in_shape[perm[i]].
inline Dims4 permuted_dims(const Dims4& in_shape, const std::array<uint8_t, 4>& perm) {
  return {in_shape[perm[0] & 3], in_shape[perm[1] & 3], in_shape[perm[2] & 3],
          in_shape[perm[3] & 3]};
}

/// out[o0][o1][o2][o3] = in[i] where i[perm[d]] = o_d: output axis d is input axis perm[d].
template <typename T>
Expected<void> transpose4(const Dims4& in_shape, const std::array<uint8_t, 4>& perm,
                          std::span<const T> in, std::span<T> out) {
  if (auto r = check_perm(perm); !r) return r;
  const uint64_t count = element_count(in_shape);
  if (auto r = check_size("transpose: in", in.size(), count); !r) return r;
  if (auto r = check_size("transpose: out", out.size(), count); !r) return r;
  const Dims4 od = permuted_dims(in_shape, perm);
  const Strides4 is = contiguous_strides(in_shape);
  uint64_t o = 0;
  for (uint64_t a = 0; a < od[0]; ++a) {
    for (uint64_t b = 0; b < od[1]; ++b) {
      for (uint64_t c = 0; c < od[2]; ++c) {
        for (uint64_t d = 0; d < od[3]; ++d) {
          const uint64_t i = a * is[perm[0]] + b * is[perm[1]] + c * is[perm[2]] + d * is[perm[3]];
          out[o++] = in[i];
        }
      }
    }
  }
  return ok();
}

}  // namespace npu::ref
