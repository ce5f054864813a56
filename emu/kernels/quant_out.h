// The output stage of a quantized CONV2D or MATMUL after the GEMM of gemm_q8.h: from a row's
// kernel sums S and A's row sum R it forms, per output channel j, the exact
//   acc = S - b'_zp[j] * R - a_zp * C'[j] + K * a_zp * b'_zp[j] + bias[j]
// (= sum((a - a_zp) * (b - w_zp)) + bias, gemm_q8.h) and writes it as int32 (wrapping) or
// requantized to 8 bits by the ISA's one rounding rule (npu/ref/scalar.h: requantize, round
// half to even on the exact product). With AVX-512 selected (cpu_isa.h) eight channels are
// done per instruction in 64-bit lanes, bit for bit the scalar rule; a lane group whose acc
// leaves int32 (never for 8-bit data and K below 2^15) and any channel whose shift is outside
// [1, 62] take the scalar rule.
//
// Threading: immutable after construction; rows() may run on several threads at once.
// Lifetime: keeps pointers to the channel parameters it was given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gemm_q8.h"
#include "matrix_common.h"

namespace npu::emu::kern {

class QuantOut {
 public:
  /// The vector rule's variants, fixed per command: row_sum (some b'_zp is not 0), check (an
  /// acc may leave int32: such a lane group falls back to the scalar rule), ordered (lo <= hi).
  struct Variant {
    bool row_sum, check, ordered;
  };

  /// Channels [0, b.n()) of `b` with parameters q[0 .. b.n()), A's zero point a_zp (stored
  /// domain) and the command's output stage.
  QuantOut(const QOutput& qo, const npu_chan_qparams* q, const PackedQ8& b, int64_t a_zp);
  /// n channels whose sums are already the exact sum((a - a_zp) * (b - w_zp)) over k terms
  /// (a depthwise convolution): only the bias and the requantization are left.
  QuantOut(const QOutput& qo, const npu_chan_qparams* q, size_t n, uint64_t k);

  /// Whether rows() needs A's row sums (some packed zero point is not 0).
  bool needs_rowsum() const { return !zero_zps_; }

  /// Writes the n outputs of each of `rows` rows (row r at out + r * out_stride bytes,
  /// element stride 1) from their sums (row stride s.ld) and A's row sums (nullptr when not
  /// needed_rowsum()).
  void rows(std::byte* out, size_t out_stride, const QSums& s, size_t rows,
            const int64_t* rowsums) const;

 private:
  int64_t acc(int64_t s, size_t j, int64_t rowsum) const {
    const size_t n8 = lanes_.size() / 5;
    return s - lanes_[j] * rowsum + lanes_[n8 + j];
  }
  void scalar(std::byte* out, size_t j, int64_t acc) const;
  /// Fills the per-channel lanes from terms(j) = {b'_zp, the constant terms of channel j}.
  template <class Terms>
  void init(int64_t k, Terms&& terms);

  QOutput qo_;
  const npu_chan_qparams* q_;
  size_t n_;
  int64_t k_ = 0;
  bool zero_zps_;
  bool vec_;  // the AVX-512 rule (cpu_isa.h)
  Variant variant_{};
  /// Per channel, each array n rounded up to 8 long: b'_zp, the constant terms and the bias,
  /// then (vector rule) multiplier, shift and 2^(shift - 1) - 1.
  std::vector<int64_t> lanes_;
};

}  // namespace npu::emu::kern
