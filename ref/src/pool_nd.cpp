// Reference N-D pooling (npu/ref/pool_nd.h): one loop nest over output positions and window
// positions as multi-indices, for any spatial rank.
#include "npu/ref/pool_nd.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "npu/cancel.h"
#include "npu/ref/scalar.h"
#include "npu/ref/tensor.h"

namespace npu::ref {

namespace {

uint64_t product(const std::vector<int64_t>& dims) {
  uint64_t n = 1;
  for (int64_t d : dims) {
    if (d <= 0) return 0;
    if (n > UINT64_MAX / static_cast<uint64_t>(d)) return UINT64_MAX;
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

/// Advances a row-major multi-index within `dims`; false after the last one.
bool next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}

/// Advances a row-major multi-index within [lo, hi) per dim; false after the last one.
bool next_index_in(std::vector<int64_t>& idx, const std::vector<int64_t>& lo,
                   const std::vector<int64_t>& hi) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < hi[d]) return true;
    idx[d] = lo[d];
  }
  return false;
}

/// The window taps k in [0, kernel) whose position start + k * dilation lies in [lo, hi):
/// [k_lo, k_hi) (empty when k_hi <= k_lo). Pure arithmetic, so a window of 2^62 taps costs
/// no more than a small one; no intermediate leaves int64 for positions within the input.
std::pair<int64_t, int64_t> taps_within(int64_t start, int64_t kernel, int64_t dilation, int64_t lo,
                                        int64_t hi) {
  // Smallest k with start + k*dil >= lo; largest k with start + k*dil <= hi - 1.
  const int64_t k_lo = start >= lo ? 0 : (lo - start + dilation - 1) / dilation;
  if (hi - 1 < start) return {k_lo, 0};
  const int64_t k_hi = std::min(kernel, (hi - 1 - start) / dilation + 1);
  return {std::min(k_lo, kernel), k_hi};
}

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

}  // namespace

Expected<void> check_pool_nd(const PoolNdShape& s, size_t in_size, size_t out_size) {
  const size_t r = s.in.size();
  if (r == 0) return make_error(EINVAL, "pool: spatial rank must be >= 1");
  for (const auto* v : {&s.out, &s.kernel, &s.stride, &s.dilation, &s.pad_begin, &s.pad_end}) {
    if (v->size() != r) return make_error(EINVAL, "pool: geometry vectors differ in rank");
  }
  for (size_t d = 0; d < r; ++d) {
    if (s.in[d] <= 0 || s.out[d] <= 0 || s.kernel[d] <= 0) {
      return make_error(EINVAL, "pool: zero dimension");
    }
    if (s.stride[d] <= 0 || s.dilation[d] <= 0) {
      return make_error(EINVAL, "pool: stride and dilation must be >= 1");
    }
    if (s.pad_begin[d] < 0 || s.pad_end[d] < 0) {
      return make_error(EINVAL, "pool: pads must be >= 0");
    }
    // Every position and count below stays in int64: padded extent + window extent + steps.
    int64_t extent = 0, total = 0;
    if (__builtin_mul_overflow(s.dilation[d], s.kernel[d] - 1, &extent) ||
        __builtin_add_overflow(extent, s.in[d], &total) ||
        __builtin_add_overflow(total, s.pad_begin[d], &total) ||
        __builtin_add_overflow(total, s.pad_end[d], &total) ||
        __builtin_add_overflow(total, s.stride[d], &total) ||
        __builtin_add_overflow(total, s.dilation[d], &total) ||
        __builtin_mul_overflow(s.out[d] - 1, s.stride[d], &total)) {
      return make_error(EOVERFLOW, "pool: spatial dim " + std::to_string(d) +
                                       ": window, pads and input exceed the int64 range");
    }
  }
  const uint64_t in_plane = product(s.in), out_plane = product(s.out);
  if (s.planes != 0 && (in_plane > UINT64_MAX / s.planes || out_plane > UINT64_MAX / s.planes)) {
    return make_error(EINVAL, "pool: tensor too large");
  }
  if (auto r2 = check_size("pool: in", in_size, s.planes * in_plane); !r2) return r2;
  return check_size("pool: out", out_size, s.planes * out_plane);
}

template <typename T>
Expected<void> pool_nd(uint8_t kind, const PoolNdShape& s, std::span<const T> in, std::span<T> out,
                       std::span<int64_t> argmax) {
  if (auto r = check_pool_nd(s, in.size(), out.size()); !r) return r;
  if (kind != NPU_POOL_MAX && kind != NPU_POOL_AVG) {
    return make_error(EINVAL, "pool: unknown kind " + std::to_string(kind));
  }
  const size_t rank = s.in.size();
  const uint64_t in_plane = product(s.in), out_plane = product(s.out);
  if (!argmax.empty()) {
    if (auto r = check_size("pool: argmax", argmax.size(), s.planes * out_plane); !r) return r;
  }
  // Element strides of the input (row-major) and of the argmax offsets.
  std::vector<int64_t> row(rank), index_stride(rank);
  int64_t acc = 1;
  for (size_t d = rank; d-- > 0;) {
    row[d] = acc;
    acc *= s.in[d];
  }
  acc = 1;
  for (size_t d = 0; d < rank; ++d) {
    const size_t dd = s.column_major_argmax ? d : rank - 1 - d;
    index_stride[dd] = acc;
    acc *= s.in[dd];
  }

  std::vector<int64_t> o(rank, 0), k(rank, 0), start(rank), lo(rank), hi(rank);
  for (uint64_t oi = 0; oi < out_plane; ++oi, next_index(o, s.out)) {
    if (oi % 1024 == 0 && cancelled()) return make_error(ECANCELED, "pool: cancelled");
    // Per dim, the taps inside the input [lo, hi) and the count inside the padded input; only
    // the former are visited, in row-major window order as before.
    int64_t padded_count = 1;
    bool empty = false;
    for (size_t d = 0; d < rank; ++d) {
      start[d] = o[d] * s.stride[d] - s.pad_begin[d];
      std::tie(lo[d], hi[d]) = taps_within(start[d], s.kernel[d], s.dilation[d], 0, s.in[d]);
      empty = empty || hi[d] <= lo[d];
      const auto [p_lo, p_hi] = taps_within(start[d], s.kernel[d], s.dilation[d], -s.pad_begin[d],
                                            s.in[d] + s.pad_end[d]);
      const int64_t inside = std::max<int64_t>(0, p_hi - p_lo);
      if (__builtin_mul_overflow(padded_count, inside, &padded_count)) {
        return make_error(EOVERFLOW, "pool: window of more than 2^63 positions");
      }
    }
    for (uint64_t plane = 0; plane < s.planes; ++plane) {
      const T* x = in.data() + plane * in_plane;
      T best{};
      int64_t best_at = -1;
      float fsum = 0.0f;
      int64_t isum = 0;
      int64_t valid = 0;
      k = lo;
      for (bool more = !empty; more; more = next_index_in(k, lo, hi)) {
        int64_t off = 0, ioff = 0;
        for (size_t d = 0; d < rank; ++d) {
          const int64_t p = start[d] + k[d] * s.dilation[d];
          off += p * row[d];
          ioff += p * index_stride[d];
        }
        const T v = x[off];
        if (valid == 0 || (!is_nan(best) && (v > best || is_nan(v)))) {
          best = v;
          best_at = ioff;
        }
        if constexpr (std::is_floating_point_v<T>) {
          fsum += v;
        } else {
          isum += v;
        }
        ++valid;
      }
      T result{};
      if (valid > 0 && kind == NPU_POOL_MAX) {
        result = best;
      } else if (valid > 0) {
        const int64_t count = s.count_include_pad ? padded_count : valid;
        if constexpr (std::is_floating_point_v<T>) {
          result = fsum / static_cast<float>(count);
        } else {
          result = static_cast<T>(div_round_half_even(isum, count));
        }
      }
      out[plane * out_plane + oi] = result;
      if (!argmax.empty()) {
        argmax[plane * out_plane + oi] =
            best_at < 0 ? -1 : static_cast<int64_t>(plane * in_plane) + best_at;
      }
    }
  }
  return ok();
}

template Expected<void> pool_nd<float>(uint8_t, const PoolNdShape&, std::span<const float>,
                                       std::span<float>, std::span<int64_t>);
template Expected<void> pool_nd<int8_t>(uint8_t, const PoolNdShape&, std::span<const int8_t>,
                                        std::span<int8_t>, std::span<int64_t>);
template Expected<void> pool_nd<uint8_t>(uint8_t, const PoolNdShape&, std::span<const uint8_t>,
                                         std::span<uint8_t>, std::span<int64_t>);

}  // namespace npu::ref
