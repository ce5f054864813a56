// Host evaluation of the data-movement ops on constants (the shape subgraphs that PyTorch
// exports around Reshape/Flatten: Shape -> Gather -> Unsqueeze -> Concat -> Reshape).
// Element bytes are moved as-is, so these work for every dtype.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>

#include "evaluator_ops.h"
#include "npu/compiler/evaluator.h"

namespace npu::compiler::detail {

namespace {

using Dims = std::vector<int64_t>;
using Result = Expected<std::vector<TensorData>>;

Dims strides_of(const Dims& d) {
  Dims s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
  return s;
}

// Calls fn(index) for every index of `dims` in row-major order.
template <typename Fn>
void for_each_index(const Dims& dims, Fn fn) {
  if (element_count(dims) <= 0) return;
  Dims idx(dims.size(), 0);
  for (;;) {
    fn(idx);
    size_t k = dims.size();
    while (k > 0) {
      --k;
      if (++idx[k] < dims[k]) break;
      idx[k] = 0;
      if (k == 0) return;
    }
    if (dims.empty()) return;
  }
}

Expected<int64_t> norm_axis(int64_t axis, size_t rank, const char* what) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    return make_error(EINVAL, std::string(what) + " " + std::to_string(axis) +
                                  " out of range for rank " + std::to_string(rank));
  }
  return axis < 0 ? axis + r : axis;
}

TensorData with_dims(const TensorData& t, Dims dims) {
  TensorData out = t;
  out.dims = std::move(dims);
  return out;
}

Dims ints_of(const TensorData* t) {
  return t ? t->to_ints() : Dims{};
}

Result reshape(const Node& n, Inputs in) {
  if (in.size() < 2 || !in[0] || !in[1]) return make_error(EINVAL, "missing operand");
  const TensorData& x = *in[0];
  Dims target = in[1]->to_ints();
  const bool allow_zero = n.attr_int("allowzero", 0) != 0;
  int64_t infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allow_zero) {
      if (i >= x.dims.size()) return make_error(EINVAL, "shape copies a missing dim");
      target[i] = x.dims[i];
    }
    if (target[i] == -1) {
      if (infer >= 0) return make_error(EINVAL, "shape has more than one -1");
      infer = static_cast<int64_t>(i);
    } else if (target[i] < 0) {
      return make_error(EINVAL, "negative dim in shape");
    } else {
      known *= target[i];
    }
  }
  if (infer >= 0) {
    if (known == 0) return make_error(EINVAL, "cannot infer -1 with a zero dim");
    target[static_cast<size_t>(infer)] = x.element_count() / known;
  }
  if (element_count(target) != x.element_count()) {
    return make_error(EINVAL, "cannot reshape " + shape_to_string(make_shape(x.dims)) + " to " +
                                  shape_to_string(make_shape(target)));
  }
  return std::vector<TensorData>{with_dims(x, target)};
}

Result flatten(const Node& n, const TensorData& x) {
  auto axis = norm_axis(n.attr_int("axis", 1), x.dims.size() + 1, "axis");
  if (!axis) return axis.error();
  int64_t outer = 1;
  for (int64_t i = 0; i < *axis; ++i) outer *= x.dims[static_cast<size_t>(i)];
  const int64_t total = x.element_count();
  return std::vector<TensorData>{with_dims(x, {outer, outer ? total / outer : 0})};
}

Result squeeze(const TensorData& x, const Dims& axes_in) {
  std::set<int64_t> axes;
  for (int64_t a : axes_in) {
    auto ax = norm_axis(a, x.dims.size(), "axis");
    if (!ax) return ax.error();
    if (x.dims[static_cast<size_t>(*ax)] != 1) return make_error(EINVAL, "squeezed dim is not 1");
    axes.insert(*ax);
  }
  Dims out;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    const bool drop = axes_in.empty() ? x.dims[i] == 1 : axes.count(static_cast<int64_t>(i)) != 0;
    if (!drop) out.push_back(x.dims[i]);
  }
  return std::vector<TensorData>{with_dims(x, out)};
}

Result unsqueeze(const TensorData& x, const Dims& axes_in) {
  const size_t rank = x.dims.size() + axes_in.size();
  std::set<int64_t> axes;
  for (int64_t a : axes_in) {
    auto ax = norm_axis(a, rank, "axis");
    if (!ax) return ax.error();
    if (!axes.insert(*ax).second) return make_error(EINVAL, "repeated axis");
  }
  Dims out;
  size_t src = 0;
  for (size_t i = 0; i < rank; ++i)
    out.push_back(axes.count(static_cast<int64_t>(i)) ? 1 : x.dims[src++]);
  return std::vector<TensorData>{with_dims(x, out)};
}

Result concat(const Node& n, Inputs in) {
  if (in.empty() || !in[0]) return make_error(EINVAL, "missing operand");
  const TensorData& first = *in[0];
  auto axis = norm_axis(n.attr_int("axis", 0), first.dims.size(), "axis");
  if (!axis) return axis.error();
  const auto ax = static_cast<size_t>(*axis);
  Dims out_dims = first.dims;
  out_dims[ax] = 0;
  for (const TensorData* t : in) {
    if (!t || t->dtype != first.dtype || t->dims.size() != first.dims.size()) {
      return make_error(EINVAL, "operands differ in type or rank");
    }
    for (size_t d = 0; d < t->dims.size(); ++d) {
      if (d != ax && t->dims[d] != first.dims[d]) return make_error(EINVAL, "operand dims differ");
    }
    out_dims[ax] += t->dims[ax];
  }
  TensorData out = TensorData::zeros(first.dtype, out_dims);
  int64_t outer = 1;
  for (size_t d = 0; d < ax; ++d) outer *= out_dims[d];
  size_t pos = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (const TensorData* t : in) {
      const size_t chunk = t->bytes.size() / static_cast<size_t>(std::max<int64_t>(outer, 1));
      if (chunk > 0) {
        std::memcpy(out.bytes.data() + pos, t->bytes.data() + static_cast<size_t>(o) * chunk,
                    chunk);
      }
      pos += chunk;
    }
  }
  return std::vector<TensorData>{std::move(out)};
}

Result gather(const Node& n, const TensorData& x, const TensorData& indices) {
  auto axis = norm_axis(n.attr_int("axis", 0), x.dims.size(), "axis");
  if (!axis) return axis.error();
  const auto ax = static_cast<size_t>(*axis);
  Dims out_dims(x.dims.begin(), x.dims.begin() + static_cast<std::ptrdiff_t>(ax));
  out_dims.insert(out_dims.end(), indices.dims.begin(), indices.dims.end());
  out_dims.insert(out_dims.end(), x.dims.begin() + static_cast<std::ptrdiff_t>(ax) + 1,
                  x.dims.end());
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < ax; ++d) outer *= x.dims[d];
  for (size_t d = ax + 1; d < x.dims.size(); ++d) inner *= x.dims[d];
  const int64_t len = x.dims[ax];
  const size_t es = dtype_size(x.dtype);
  TensorData out = TensorData::zeros(x.dtype, out_dims);
  const int64_t count = indices.element_count();
  size_t pos = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < count; ++k) {
      int64_t i = indices.as_int(k);
      if (i < 0) i += len;
      if (i < 0 || i >= len) return make_error(EINVAL, "index out of range");
      const size_t bytes = static_cast<size_t>(inner) * es;
      if (bytes == 0) continue;
      std::memcpy(out.bytes.data() + pos,
                  x.bytes.data() + static_cast<size_t>((o * len + i) * inner) * es, bytes);
      pos += bytes;
    }
  }
  return std::vector<TensorData>{std::move(out)};
}

Result slice(Inputs in) {
  if (in.size() < 3 || !in[0] || !in[1] || !in[2]) return make_error(EINVAL, "missing operand");
  const TensorData& x = *in[0];
  const Dims starts = in[1]->to_ints();
  const Dims ends = in[2]->to_ints();
  Dims axes = in.size() > 3 && in[3] ? in[3]->to_ints() : Dims{};
  Dims steps = in.size() > 4 && in[4] ? in[4]->to_ints() : Dims{};
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    return make_error(EINVAL, "starts, ends, axes and steps differ in length");
  }
  const size_t rank = x.dims.size();
  Dims first(rank, 0), step(rank, 1), out_dims = x.dims;
  for (size_t k = 0; k < starts.size(); ++k) {
    auto ax = norm_axis(axes[k], rank, "axis");
    if (!ax) return ax.error();
    const auto a = static_cast<size_t>(*ax);
    const int64_t dim = x.dims[a];
    const int64_t s = steps[k];
    if (s == 0) return make_error(EINVAL, "step 0");
    auto clampi = [](int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(v, hi)); };
    int64_t b = starts[k] < 0 ? starts[k] + dim : starts[k];
    int64_t e = ends[k] < 0 ? ends[k] + dim : ends[k];
    if (s > 0) {
      b = clampi(b, 0, dim);
      e = clampi(e, 0, dim);
      out_dims[a] = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = clampi(b, -1, dim - 1);
      e = clampi(e, -1, dim - 1);
      out_dims[a] = b > e ? (b - e - s - 1) / (-s) : 0;
    }
    first[a] = b;
    step[a] = s;
  }
  TensorData out = TensorData::zeros(x.dtype, out_dims);
  const Dims xs = strides_of(x.dims);
  const size_t es = dtype_size(x.dtype);
  size_t pos = 0;
  for_each_index(out_dims, [&](const Dims& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += (first[d] + idx[d] * step[d]) * xs[d];
    std::memcpy(out.bytes.data() + pos, x.bytes.data() + static_cast<size_t>(off) * es, es);
    pos += es;
  });
  return std::vector<TensorData>{std::move(out)};
}

Result transpose(const Node& n, const TensorData& x) {
  const size_t rank = x.dims.size();
  Dims perm = n.attr_ints("perm");
  if (perm.empty()) {
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  }
  Dims sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < rank; ++i) {
    if (sorted.size() != rank || sorted[i] != static_cast<int64_t>(i)) {
      return make_error(EINVAL, "perm is not a permutation");
    }
  }
  Dims out_dims(rank);
  for (size_t i = 0; i < rank; ++i) out_dims[i] = x.dims[static_cast<size_t>(perm[i])];
  TensorData out = TensorData::zeros(x.dtype, out_dims);
  const Dims xs = strides_of(x.dims);
  const size_t es = dtype_size(x.dtype);
  size_t pos = 0;
  for_each_index(out_dims, [&](const Dims& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += idx[d] * xs[static_cast<size_t>(perm[d])];
    std::memcpy(out.bytes.data() + pos, x.bytes.data() + static_cast<size_t>(off) * es, es);
    pos += es;
  });
  return std::vector<TensorData>{std::move(out)};
}

Result expand(const TensorData& x, const TensorData& shape) {
  auto dims = broadcast_dims(x.dims, shape.to_ints());
  if (!dims) return dims.error();
  TensorData out = TensorData::zeros(x.dtype, *dims);
  if (out.element_count() > (int64_t{1} << 26)) return make_error(EFBIG, "too large to fold");
  const auto offs = broadcast_offsets(x.dims, *dims);
  const size_t es = dtype_size(x.dtype);
  for (size_t i = 0; i < offs.size(); ++i) {
    std::memcpy(out.bytes.data() + i * es, x.bytes.data() + static_cast<size_t>(offs[i]) * es, es);
  }
  return std::vector<TensorData>{std::move(out)};
}

Result split(const Node& n, Inputs in) {
  const TensorData& x = *in[0];
  auto axis = norm_axis(n.attr_int("axis", 0), x.dims.size(), "axis");
  if (!axis) return axis.error();
  const auto ax = static_cast<size_t>(*axis);
  Dims sizes = in.size() > 1 && in[1] ? in[1]->to_ints() : Dims{};
  const auto parts = static_cast<int64_t>(n.outputs.size());
  if (sizes.empty()) {
    if (parts == 0 || x.dims[ax] % parts != 0) return make_error(EINVAL, "uneven split");
    sizes.assign(static_cast<size_t>(parts), x.dims[ax] / parts);
  }
  std::vector<TensorData> outs;
  int64_t start = 0;
  for (int64_t s : sizes) {
    const int64_t st = start, en = start + s;
    const int64_t axi = static_cast<int64_t>(ax), one = 1;
    const TensorData b =
        TensorData::from_ints(DType::kInt64, {1}, std::span<const int64_t>(&st, 1));
    const TensorData e =
        TensorData::from_ints(DType::kInt64, {1}, std::span<const int64_t>(&en, 1));
    const TensorData a =
        TensorData::from_ints(DType::kInt64, {1}, std::span<const int64_t>(&axi, 1));
    const TensorData p =
        TensorData::from_ints(DType::kInt64, {1}, std::span<const int64_t>(&one, 1));
    const TensorData* args[] = {&x, &b, &e, &a, &p};
    auto r = slice(args);
    if (!r) return r.error();
    outs.push_back(std::move((*r)[0]));
    start = en;
  }
  return outs;
}

Result range(const TensorData& start, const TensorData& limit, const TensorData& delta) {
  const bool integral = dtype_is_integral(start.dtype);
  const double s = start.as_double(0), l = limit.as_double(0), d = delta.as_double(0);
  if (d == 0) return make_error(EINVAL, "delta is 0");
  const double steps = std::ceil((l - s) / d);
  const int64_t count = steps > 0 ? static_cast<int64_t>(steps) : 0;
  if (count > (int64_t{1} << 26)) return make_error(EFBIG, "too large to fold");
  TensorData out = TensorData::zeros(start.dtype, {count});
  for (int64_t i = 0; i < count; ++i) {
    if (integral) {
      out.set_int(i, start.as_int(0) + i * delta.as_int(0));
    } else {
      out.set_double(i, s + static_cast<double>(i) * d);
    }
  }
  return std::vector<TensorData>{std::move(out)};
}

Result constant_of_shape(const Node& n, const TensorData& shape) {
  const TensorData* value = n.attr_tensor("value");
  const DType t = value ? value->dtype : DType::kFloat32;
  const Dims dims = shape.to_ints();
  if (element_count(dims) < 0 || element_count(dims) > (int64_t{1} << 26)) {
    return make_error(EFBIG, "too large to fold");
  }
  TensorData out = TensorData::zeros(t, dims);
  if (value && value->element_count() == 1) {
    const size_t es = dtype_size(t);
    for (size_t i = 0; i < out.bytes.size(); i += es)
      std::memcpy(out.bytes.data() + i, value->bytes.data(), es);
  }
  return std::vector<TensorData>{std::move(out)};
}

Result shape_of(const Node& n, const TensorData& x) {
  const auto rank = static_cast<int64_t>(x.dims.size());
  int64_t start = n.attr_int("start", 0), end = n.attr_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  Dims d(x.dims.begin() + start, x.dims.begin() + end);
  return std::vector<TensorData>{
      TensorData::from_ints(DType::kInt64, {static_cast<int64_t>(d.size())}, d)};
}

}  // namespace

std::vector<int64_t> broadcast_offsets(const Dims& in_dims, const Dims& out_dims) {
  const size_t rank = out_dims.size();
  Dims in_strides(rank, 0);
  const Dims s = strides_of(in_dims);
  for (size_t i = 0; i < in_dims.size(); ++i) {
    const size_t o = rank - in_dims.size() + i;
    in_strides[o] = in_dims[i] == 1 ? 0 : s[i];
  }
  std::vector<int64_t> offs;
  offs.reserve(static_cast<size_t>(std::max<int64_t>(element_count(out_dims), 0)));
  for_each_index(out_dims, [&](const Dims& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += idx[d] * in_strides[d];
    offs.push_back(off);
  });
  return offs;
}

bool is_shape_op(const std::string& op) {
  static const std::set<std::string> ops = {
      "Reshape", "Flatten",   "Squeeze", "Unsqueeze",       "Concat", "Gather", "Slice",
      "Split",   "Transpose", "Expand",  "ConstantOfShape", "Range",  "Shape",  "Size"};
  return ops.count(op) != 0;
}

Result eval_shape_op(const Node& n, Inputs in) {
  const std::string& op = n.op_type;
  const size_t required = op == "Concat"                                          ? in.size()
                          : (op == "Reshape" || op == "Gather" || op == "Expand") ? 2
                          : op == "Slice" || op == "Range"                        ? 3
                                                                                  : 1;
  if (in.size() < required) return make_error(EINVAL, "missing operand");
  for (size_t i = 0; i < required; ++i) {
    if (!in[i]) return make_error(EINVAL, "missing operand");
  }
  if (op == "Reshape") return reshape(n, in);
  if (op == "Flatten") return flatten(n, *in[0]);
  if (op == "Squeeze") return squeeze(*in[0], in.size() > 1 ? ints_of(in[1]) : Dims{});
  if (op == "Unsqueeze") return unsqueeze(*in[0], in.size() > 1 ? ints_of(in[1]) : Dims{});
  if (op == "Concat") return concat(n, in);
  if (op == "Gather") return gather(n, *in[0], *in[1]);
  if (op == "Slice") return slice(in);
  if (op == "Split") return split(n, in);
  if (op == "Transpose") return transpose(n, *in[0]);
  if (op == "Expand") return expand(*in[0], *in[1]);
  if (op == "ConstantOfShape") return constant_of_shape(n, *in[0]);
  if (op == "Range") return range(*in[0], *in[1], *in[2]);
  if (op == "Shape") return shape_of(n, *in[0]);
  if (op == "Size") {
    const int64_t c = in[0]->element_count();
    return std::vector<TensorData>{
        TensorData::from_ints(DType::kInt64, {}, std::span<const int64_t>(&c, 1))};
  }
  return make_error(ENOTSUP, "cannot evaluate on the host");
}

}  // namespace npu::compiler::detail
