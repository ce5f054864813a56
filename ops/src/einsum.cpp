// Einsum (opset 12-18; npu/ops/operators.def): the Einstein summation of its inputs by an
// `equation` such as "bij,bjk->bik", computed by one general loop on the host.
//
// Semantics (ONNX, as numpy.einsum): labels are the letters a-z and A-Z; a term may hold one
// "..." standing for the dims its input has beyond its letters, and the ellipsis dims of all
// inputs broadcast against each other (right-aligned; size 1 stretches). A letter repeated
// within a term takes the diagonal; a letter's size must be the same wherever it appears. With
// "->" the output is the term after it (each label once; it needs a "..." when the inputs'
// ellipses stand for dims, as NumPy requires); without it (implicit form) the output is the
// ellipsis dims followed by the letters that appear exactly once, in ASCII order. Every label
// not in the output is summed over. Floats accumulate in double; integers wrap as NumPy's do.
//
// Work: output elements x summed positions x inputs multiply-adds, checked against the call's
// max_work before the output is allocated; the loop polls the deadline.
#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include "attributes.h"
#include "dtype_dispatch.h"
#include "npu/cancel.h"
#include "operands.h"
#include "work_limits.h"

namespace npu::ops::detail {

namespace {

constexpr int kLetters = 52;  // a-z, A-Z; ellipsis dims get ids from kLetters on

/// One term of the equation: label ids in order, with the ellipsis at `ellipsis` (-1: none).
struct Term {
  std::vector<int> labels;
  int ellipsis = -1;  // position in `labels` where the ellipsis dims go
};

int letter_id(char ch) {
  if (ch >= 'a' && ch <= 'z') return ch - 'a';
  if (ch >= 'A' && ch <= 'Z') return 26 + (ch - 'A');
  return -1;
}

/// ASCII order of the ids of letters ('A' < 'Z' < 'a').
int ascii_of(int id) {
  return id < 26 ? 'a' + id : 'A' + (id - 26);
}

Expected<Term> parse_term(const OpCall& c, const std::string& t) {
  Term term;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == '.') {
      if (t.compare(i, 3, "...") != 0 || term.ellipsis >= 0) {
        return op_error(c, "equation term '" + t + "' has a malformed or repeated ellipsis");
      }
      term.ellipsis = static_cast<int>(term.labels.size());
      i += 2;
      continue;
    }
    const int id = letter_id(t[i]);
    if (id < 0) {
      return op_error(c, std::string("equation has an invalid character '") + t[i] + "'");
    }
    term.labels.push_back(id);
  }
  return term;
}

/// The parsed equation: one term per input and the output term (nullopt: implicit form).
struct Equation {
  std::vector<Term> inputs;
  std::optional<Term> output;
};

Expected<Equation> parse_equation(const OpCall& c, const std::string& text) {
  std::string eq;
  for (char ch : text) {
    if (ch != ' ') eq += ch;
  }
  Equation e;
  std::string lhs = eq;
  if (const size_t arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    auto out = parse_term(c, eq.substr(arrow + 2));
    if (!out) return out.error();
    e.output = std::move(*out);
  }
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    auto term = parse_term(c, lhs.substr(start, comma - start));
    if (!term) return term.error();
    e.inputs.push_back(std::move(*term));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return e;
}

/// Sizes and per-input element strides of every label (letters, then ellipsis dims).
struct Plan {
  std::vector<int64_t> size;                  // by label id; -1: unused
  std::vector<std::vector<int64_t>> strides;  // [input][label id]
  std::vector<int> out_labels, sum_labels;
  Shape out_shape;
};

Expected<Plan> plan(const OpCall& c, const Equation& e, std::span<const NpyArray* const> xs) {
  if (e.inputs.size() != xs.size()) {
    return op_error(c, "equation has " + std::to_string(e.inputs.size()) + " input terms for " +
                           std::to_string(xs.size()) + " inputs");
  }
  // The rank of the broadcast ellipsis dims.
  int64_t ell = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Term& t = e.inputs[i];
    const auto rank = static_cast<int64_t>(xs[i]->shape.size());
    const auto letters = static_cast<int64_t>(t.labels.size());
    if (t.ellipsis < 0 ? rank != letters : rank < letters) {
      return op_error(c, "input " + std::to_string(i) + " of shape " + shape_text(xs[i]->shape) +
                             " does not match its equation term");
    }
    if (t.ellipsis >= 0) ell = std::max(ell, rank - letters);
  }
  Plan p;
  const size_t nlabels = kLetters + static_cast<size_t>(ell);
  p.size.assign(nlabels, -1);
  p.strides.assign(xs.size(), std::vector<int64_t>(nlabels, 0));
  std::vector<int> uses(nlabels, 0);
  for (size_t i = 0; i < xs.size(); ++i) {
    const Term& t = e.inputs[i];
    const Shape& s = xs[i]->shape;
    const int64_t own_ell = static_cast<int64_t>(s.size() - t.labels.size());
    // The label of each axis of this input.
    std::vector<size_t> axis_label;
    for (size_t k = 0; k <= t.labels.size(); ++k) {
      if (static_cast<int>(k) == t.ellipsis) {
        for (int64_t j = 0; j < own_ell; ++j) {
          axis_label.push_back(static_cast<size_t>(kLetters + ell - own_ell + j));
        }
      }
      if (k < t.labels.size()) axis_label.push_back(static_cast<size_t>(t.labels[k]));
    }
    int64_t stride = 1;
    for (size_t a = s.size(); a-- > 0;) {
      const size_t id = axis_label[a];
      const bool is_ellipsis = id >= kLetters;
      int64_t& size = p.size[id];
      if (size < 0 || (is_ellipsis && size == 1)) {
        size = s[a];
      } else if (s[a] != size && !(is_ellipsis && s[a] == 1)) {
        return op_error(c, "input " + std::to_string(i) + " of shape " + shape_text(s) + ": dim " +
                               std::to_string(a) + " of size " + std::to_string(s[a]) +
                               " does not match " + std::to_string(size) + " elsewhere");
      }
      if (!(is_ellipsis && s[a] == 1)) p.strides[i][id] += stride;
      stride *= s[a];
    }
    for (int id : t.labels) ++uses[static_cast<size_t>(id)];
  }
  std::vector<bool> in_out(nlabels, false);
  if (e.output) {
    const Term& t = *e.output;
    if (t.ellipsis < 0 && ell > 0) {
      return op_error(c, "the output term needs '...' for the " + std::to_string(ell) +
                             " broadcast dims of the inputs");
    }
    for (size_t k = 0; k <= t.labels.size(); ++k) {
      if (static_cast<int>(k) == t.ellipsis) {
        for (int64_t j = 0; j < ell; ++j) p.out_labels.push_back(kLetters + static_cast<int>(j));
      }
      if (k == t.labels.size()) break;
      const int id = t.labels[k];
      if (p.size[static_cast<size_t>(id)] < 0) {
        return op_error(c, std::string("output label '") + static_cast<char>(ascii_of(id)) +
                               "' is not in any input");
      }
      if (in_out[static_cast<size_t>(id)]) {
        return op_error(
            c, std::string("output label '") + static_cast<char>(ascii_of(id)) + "' is repeated");
      }
      in_out[static_cast<size_t>(id)] = true;
      p.out_labels.push_back(id);
    }
  } else {
    for (int64_t j = 0; j < ell; ++j) p.out_labels.push_back(kLetters + static_cast<int>(j));
    std::vector<int> once;
    for (int id = 0; id < kLetters; ++id) {
      if (uses[static_cast<size_t>(id)] == 1) once.push_back(id);
    }
    std::sort(once.begin(), once.end(), [](int a, int b) { return ascii_of(a) < ascii_of(b); });
    p.out_labels.insert(p.out_labels.end(), once.begin(), once.end());
  }
  for (int id : p.out_labels) in_out[static_cast<size_t>(id)] = true;
  for (size_t id = 0; id < nlabels; ++id) {
    if (p.size[id] >= 0 && !in_out[id]) p.sum_labels.push_back(static_cast<int>(id));
  }
  for (int id : p.out_labels) p.out_shape.push_back(p.size[static_cast<size_t>(id)]);
  return p;
}

/// The accumulator of T: double for floats; for integers uint64 (wrapping arithmetic),
/// converted back modulo 2^N as NumPy's fixed-width integers wrap.
template <typename T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

template <typename T>
Expected<void> contract(const OpCall& c, const Plan& p, std::span<const NpyArray* const> xs,
                        NpyArray& out) {
  using A = Acc<T>;
  const size_t n_in = xs.size();
  std::vector<const T*> data(n_in);
  for (size_t i = 0; i < n_in; ++i) data[i] = xs[i]->view<T>().data();
  T* y = out.view<T>().data();
  // The loop runs over the output labels, then the summed ones (an odometer over both), with
  // every input's element offset moved by its stride of the label that steps.
  std::vector<int> labels = p.out_labels;
  labels.insert(labels.end(), p.sum_labels.begin(), p.sum_labels.end());
  const size_t nl = labels.size();
  std::vector<int64_t> dims(nl);
  std::vector<std::vector<int64_t>> st(n_in, std::vector<int64_t>(nl));
  for (size_t l = 0; l < nl; ++l) {
    dims[l] = p.size[static_cast<size_t>(labels[l])];
    for (size_t i = 0; i < n_in; ++i) st[i][l] = p.strides[i][static_cast<size_t>(labels[l])];
  }
  const int64_t outputs = count(p.out_shape);
  int64_t inner = 1;
  for (int id : p.sum_labels) inner *= p.size[static_cast<size_t>(id)];
  if (inner == 0) return ok();  // an empty sum: the zero-filled output is the result
  std::vector<int64_t> pos(nl, 0), off(n_in, 0);
  int64_t steps = 0;
  for (int64_t o = 0; o < outputs; ++o) {
    A acc{};
    for (int64_t s = 0; s < inner; ++s) {
      if (++steps % 65536 == 0 && cancelled()) return op_error(c, "cancelled");
      A prod = static_cast<A>(data[0][off[0]]);
      for (size_t i = 1; i < n_in; ++i) prod = prod * static_cast<A>(data[i][off[i]]);
      acc = acc + prod;
      // One step of the odometer: `inner` steps wrap the summed labels and move the output
      // labels to output o + 1.
      for (size_t l = nl; l-- > 0;) {
        if (++pos[l] < dims[l]) {
          for (size_t i = 0; i < n_in; ++i) off[i] += st[i][l];
          break;
        }
        for (size_t i = 0; i < n_in; ++i) off[i] -= st[i][l] * (dims[l] - 1);
        pos[l] = 0;
      }
    }
    y[o] = static_cast<T>(acc);
  }
  return ok();
}

}  // namespace

HostOutputs einsum(const OpCall& c) {
  auto text = string_attr(c, "equation");
  if (!text) return text.error();
  if (text->empty()) return op_error(c, "missing attribute 'equation'");
  std::vector<const NpyArray*> xs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    auto x = input(c, i);
    if (!x) return x.error();
    if (i > 0) NPU_TRY(need_same_dtype(c, *xs[0], **x));
    xs.push_back(*x);
  }
  if (xs.empty()) return op_error(c, "needs at least one input");
  auto eq = parse_equation(c, *text);
  if (!eq) return eq.error();
  auto p = plan(c, *eq, xs);
  if (!p) return p.error();
  int64_t summed = 1;
  for (int id : p->sum_labels) {
    if (__builtin_mul_overflow(summed, p->size[static_cast<size_t>(id)], &summed)) summed = -1;
    if (summed < 0) break;
  }
  int64_t per_output = -1;
  if (summed >= 0 && __builtin_mul_overflow(summed, static_cast<int64_t>(xs.size()), &per_output)) {
    per_output = -1;
  }
  NPU_TRY(check_work(c, count(p->out_shape), per_output, "multiply-adds"));
  auto out = alloc_output(c, xs[0]->dtype, p->out_shape);
  if (!out) return out.error();
  auto r =
      dispatch(c, xs[0]->dtype, [&](auto t) { return contract<decltype(t)>(c, *p, xs, *out); });
  if (!r) return r.error();
  return single(std::move(*out));
}

}  // namespace npu::ops::detail
