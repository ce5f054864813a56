// Axis permutation (permute.h).
#include "permute.h"

#include <array>
#include <cstring>
#include <limits>
#include <span>

#include "broadcasting.h"
#include "npu/ref/transpose.h"

namespace npu::ops::detail {

namespace {
template <typename T>
Expected<void> transpose_as(const ref::Dims4& dims, const std::array<uint8_t, 4>& perm,
                            const NpyArray& in, NpyArray& out) {
  const size_t n = in.data.size() / sizeof(T);
  return ref::transpose4<T>(dims, perm,
                            std::span<const T>(reinterpret_cast<const T*>(in.data.data()), n),
                            std::span<T>(reinterpret_cast<T*>(out.data.data()), n));
}

/// permute() beyond rank 4 (the reference transpose's): one element copy per output index.
NpyArray permute_any_rank(const NpyArray& x, const std::vector<int64_t>& perm) {
  const size_t rank = perm.size();
  const size_t es = format::dtype_size(x.dtype);
  Shape out_shape(rank);
  std::vector<int64_t> in_strides(rank), src_strides(rank);
  int64_t acc = 1;
  for (size_t d = rank; d-- > 0;) {
    in_strides[d] = acc;
    acc *= x.shape[d];
  }
  for (size_t d = 0; d < rank; ++d) {
    out_shape[d] = x.shape[static_cast<size_t>(perm[d])];
    src_strides[d] = in_strides[static_cast<size_t>(perm[d])];
  }
  NpyArray out = NpyArray::zeros(x.dtype, out_shape);
  for_each_broadcast(out_shape, src_strides, src_strides, [&](int64_t o, int64_t i, int64_t) {
    std::memcpy(out.data.data() + static_cast<size_t>(o) * es,
                x.data.data() + static_cast<size_t>(i) * es, es);
  });
  return out;
}

}  // namespace

Expected<NpyArray> permute(const OpCall& c, const NpyArray& x, const std::vector<int64_t>& perm) {
  const Shape& s = x.shape;
  const size_t rank = s.size();
  if (perm.size() != rank) {
    return op_error(
        c, "perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(rank));
  }
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) {
      return op_error(c, "perm is not a permutation");
    }
    seen[static_cast<size_t>(p)] = true;
  }
  if (rank > 4) return permute_any_rank(x, perm);
  // Pad to 4-d with leading 1s and run the reference 4-d transpose.
  const size_t pad = 4 - rank;
  ref::Dims4 dims{1, 1, 1, 1};
  std::array<uint8_t, 4> p4{0, 1, 2, 3};
  for (size_t i = 0; i < rank; ++i) {
    if (s[i] > std::numeric_limits<uint32_t>::max()) return op_error(c, "dimension too large");
    dims[pad + i] = static_cast<uint32_t>(s[i]);
    p4[pad + i] = static_cast<uint8_t>(pad + static_cast<size_t>(perm[i]));
  }
  Shape out_shape(rank);
  for (size_t i = 0; i < rank; ++i) out_shape[i] = s[static_cast<size_t>(perm[i])];
  NpyArray out = NpyArray::zeros(x.dtype, out_shape);
  if (count(s) == 0) return out;
  Expected<void> r = ok();
  switch (format::dtype_size(x.dtype)) {
    case 1:
      r = transpose_as<uint8_t>(dims, p4, x, out);
      break;
    case 2:
      r = transpose_as<uint16_t>(dims, p4, x, out);
      break;
    case 4:
      r = transpose_as<uint32_t>(dims, p4, x, out);
      break;
    default:
      r = transpose_as<uint64_t>(dims, p4, x, out);
      break;
  }
  if (!r) return op_error(c, r.error().message);
  return out;
}

}  // namespace npu::ops::detail
