// ELTWISE and ACTIVATION over 4-D strided views. The views are first collapsed (unit dims
// dropped, dims merged where every operand is contiguous across them) so the inner loop is
// as long as possible; the op is a template constant (with_const), so the per-element
// function of npu/ref/scalar.h is inlined with its switch folded, and the contiguous /
// broadcast inner loops vectorize where the function allows; fp32 EXP and SIGMOID runs go
// through exp_f32.h (the C library's bits). Long runs are cut into pieces between which a
// device reset is polled (for_runs).
#include <algorithm>
#include <array>
#include <cstdint>

#include "cancel.h"
#include "exp_f32.h"
#include "npu/isa/dtype.h"
#include "npu/ref/scalar.h"
#include "ops.h"
#include "sram.h"

namespace npu::emu::kern {
namespace {

/// A collapsed iteration space: dims outermost first; stride[t][d] in elements of tensor t.
template <size_t NT>
struct Space {
  size_t nd = 0;
  std::array<uint64_t, 4> shape{};
  std::array<std::array<uint64_t, 4>, NT> stride{};
  bool empty = false;
};

template <size_t NT>
Space<NT> collapse(const uint32_t (&shape)[4], const std::array<const npu_vtensor*, NT>& v) {
  Space<NT> s;
  // Walk from the innermost dim outwards, building dims innermost-first, then reverse.
  std::array<uint64_t, 4> sh{};
  std::array<std::array<uint64_t, 4>, NT> st{};
  size_t nd = 0;
  for (int d = 3; d >= 0; --d) {
    if (shape[d] == 0) s.empty = true;
    if (shape[d] == 1) continue;
    if (nd > 0) {
      bool merge = true;
      for (size_t t = 0; t < NT; ++t)
        merge = merge && v[t]->stride[d] == st[t][nd - 1] * sh[nd - 1];
      if (merge) {
        sh[nd - 1] *= shape[d];
        continue;
      }
    }
    sh[nd] = shape[d];
    for (size_t t = 0; t < NT; ++t) st[t][nd] = v[t]->stride[d];
    ++nd;
  }
  if (nd == 0) {  // a single element
    sh[0] = 1;
    for (size_t t = 0; t < NT; ++t) st[t][0] = 1;
    nd = 1;
  }
  s.nd = nd;
  for (size_t i = 0; i < nd; ++i) {
    s.shape[i] = sh[nd - 1 - i];
    for (size_t t = 0; t < NT; ++t) s.stride[t][i] = st[t][nd - 1 - i];
  }
  return s;
}

/// Elements per piece of a run between two polls for a device reset.
constexpr uint64_t kPollElements = uint64_t{1} << 14;

/// Calls inner(ptrs, count, inner_strides) for every innermost run of the space, in order, a
/// run cut into pieces of kPollElements. Strides of 0 let a view that fits in SRAM hold
/// billions of elements, so the loop polls for a device reset (the watchdog's) after every
/// whole piece and every 256 shorter ones, and stops early (the job has failed).
template <size_t NT, class Inner>
void for_runs(const Space<NT>& s, std::array<std::byte*, NT> base,
              const std::array<size_t, NT>& esize, Inner&& inner) {
  if (s.empty) return;
  uint64_t pieces = 0;
  const size_t outer_dims = s.nd - 1;
  std::array<uint64_t, NT> in_st{};
  for (size_t t = 0; t < NT; ++t) in_st[t] = s.stride[t][outer_dims];
  const uint64_t n = s.shape[outer_dims];
  std::array<uint64_t, 3> idx{};
  std::array<uint64_t, 3> lim{1, 1, 1};
  for (size_t d = 0; d < outer_dims; ++d) lim[3 - outer_dims + d] = s.shape[d];
  for (idx[0] = 0; idx[0] < lim[0]; ++idx[0])
    for (idx[1] = 0; idx[1] < lim[1]; ++idx[1])
      for (idx[2] = 0; idx[2] < lim[2]; ++idx[2]) {
        std::array<std::byte*, NT> p = base;
        for (size_t t = 0; t < NT; ++t) {
          uint64_t off = 0;
          for (size_t d = 0; d < outer_dims; ++d) off += idx[3 - outer_dims + d] * s.stride[t][d];
          p[t] += off * esize[t];
        }
        for (uint64_t done = 0; done < n;) {
          const uint64_t k = std::min(n - done, kPollElements);
          std::array<std::byte*, NT> q = p;
          for (size_t t = 0; t < NT; ++t) q[t] += done * in_st[t] * esize[t];
          inner(q, k, in_st);
          done += k;
          if ((k == kPollElements || (++pieces & 255) == 0) && cancelled()) return;
        }
      }
}

// Flattened: the per-element function (ref::eltwise / ref::activation with the op known at
// compile time) is inlined and its switch folded, so the loops vectorize; GCC left the large
// ref::activation_fp<float> as a call per element (5% of a ResNet-50 inference).
template <class T, class F>
[[gnu::flatten]] void binary_run(const std::array<std::byte*, 3>& p, uint64_t n,
                                 const std::array<uint64_t, 3>& s, F f) {
  const std::byte* a = p[0];
  const std::byte* b = p[1];
  std::byte* o = p[2];
  if (s[2] == 1 && s[0] == 1 && s[1] == 1) {
    for (uint64_t i = 0; i < n; ++i) sti<T>(o, i, f(ldi<T>(a, i), ldi<T>(b, i)));
  } else if (s[2] == 1 && s[0] == 1 && s[1] == 0) {
    const T bv = ld<T>(b);
    for (uint64_t i = 0; i < n; ++i) sti<T>(o, i, f(ldi<T>(a, i), bv));
  } else if (s[2] == 1 && s[0] == 0 && s[1] == 1) {
    const T av = ld<T>(a);
    for (uint64_t i = 0; i < n; ++i) sti<T>(o, i, f(av, ldi<T>(b, i)));
  } else {
    for (uint64_t i = 0; i < n; ++i)
      sti<T>(o, i * s[2], f(ldi<T>(a, i * s[0]), ldi<T>(b, i * s[1])));
  }
}

template <class T, class F>
[[gnu::flatten]] void unary_run(const std::array<std::byte*, 2>& p, uint64_t n,
                                const std::array<uint64_t, 2>& s, F f) {
  const std::byte* x = p[0];
  std::byte* o = p[1];
  if (s[0] == 1 && s[1] == 1) {
    for (uint64_t i = 0; i < n; ++i) sti<T>(o, i, f(ldi<T>(x, i)));
  } else if (s[0] == 0 && s[1] == 1) {
    const T v = f(ld<T>(x));
    for (uint64_t i = 0; i < n; ++i) sti<T>(o, i, v);
  } else {
    for (uint64_t i = 0; i < n; ++i) sti<T>(o, i * s[1], f(ldi<T>(x, i * s[0])));
  }
}

template <class T, class F>
void binary(const npu_cmd_eltwise& c, std::span<std::byte> sram, F f) {
  const Space<3> s = collapse<3>(c.shape, {&c.a, &c.b, &c.out});
  std::byte* base = sram.data();
  for_runs<3>(s, {base + c.a.addr, base + c.b.addr, base + c.out.addr},
              {sizeof(T), sizeof(T), sizeof(T)},
              [&](const auto& p, uint64_t n, const auto& st) { binary_run<T>(p, n, st, f); });
}

template <class T, class F>
void unary(const npu_cmd_activation& c, std::span<std::byte> sram, F f) {
  const Space<2> s = collapse<2>(c.shape, {&c.in, &c.out});
  std::byte* base = sram.data();
  for_runs<2>(s, {base + c.in.addr, base + c.out.addr}, {sizeof(T), sizeof(T)},
              [&](const auto& p, uint64_t n, const auto& st) { unary_run<T>(p, n, st, f); });
}

}  // namespace

void eltwise(const npu_cmd_eltwise& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  with_const<NPU_ELTWISE_ADD, NPU_ELTWISE_PRELU>(c.op, [&](auto op) {
    constexpr uint8_t kOp = decltype(op)::value;
    switch (c.dtype) {
      case NPU_DTYPE_FP32:
        binary<float>(c, sram, [](float a, float b) { return ref::eltwise(kOp, a, b); });
        break;
      case NPU_DTYPE_INT32:
        binary<int32_t>(c, sram, [](int32_t a, int32_t b) {
          return ref::eltwise_int(kOp, a, b, NPU_DTYPE_INT32);
        });
        break;
      case NPU_DTYPE_INT8:
        binary<int8_t>(c, sram, [](int8_t a, int8_t b) {
          return static_cast<int8_t>(ref::eltwise_int(kOp, a, b, NPU_DTYPE_INT8));
        });
        break;
      default:
        break;
    }
  });
}

void activation(const npu_cmd_activation& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  if (c.func == NPU_ACT_COPY) {  // any dtype: a strided move of raw elements
    if (isa::dtype_size(c.dtype) == 1)
      unary<uint8_t>(c, sram, [](uint8_t x) { return x; });
    else if (isa::dtype_size(c.dtype) == 2)  // fp16 / bf16 (ISA 1.1)
      unary<uint16_t>(c, sram, [](uint16_t x) { return x; });
    else
      unary<uint32_t>(c, sram, [](uint32_t x) { return x; });
    return;
  }
  const float alpha = c.alpha, beta = c.beta;
  with_const<NPU_ACT_COPY, NPU_ACT_MAX>(c.func, [&](auto fn) {
    constexpr uint8_t kFn = decltype(fn)::value;
    switch (c.dtype) {
      case NPU_DTYPE_FP32:
        if constexpr (kFn == NPU_ACT_SIGMOID || kFn == NPU_ACT_EXP) {
          if (exp_f32_vectorized()) {  // contiguous runs 32 at a time, the same bits
            const Space<2> s = collapse<2>(c.shape, {&c.in, &c.out});
            for_runs<2>(s, {sram.data() + c.in.addr, sram.data() + c.out.addr}, {4, 4},
                        [&](const auto& p, uint64_t n, const auto& st) {
                          if (st[0] == 1 && st[1] == 1)
                            (kFn == NPU_ACT_SIGMOID ? sigmoid_f32 : exp_f32)(p[0], p[1], n);
                          else
                            unary_run<float>(p, n, st, [=](float x) {
                              return ref::activation(kFn, x, alpha, beta);
                            });
                        });
            break;
          }
        }
        unary<float>(c, sram, [=](float x) { return ref::activation(kFn, x, alpha, beta); });
        break;
      case NPU_DTYPE_INT32:
        unary<int32_t>(c, sram, [=](int32_t x) {
          return ref::activation_int(kFn, x, alpha, beta, NPU_DTYPE_INT32);
        });
        break;
      case NPU_DTYPE_INT8:
        unary<int8_t>(c, sram, [=](int8_t x) {
          return static_cast<int8_t>(ref::activation_int(kFn, x, alpha, beta, NPU_DTYPE_INT8));
        });
        break;
      default:
        break;
    }
  });
}

}  // namespace npu::emu::kern
