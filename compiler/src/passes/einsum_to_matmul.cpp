// einsum-to-matmul: an Einsum that is a (batched) matrix product becomes a MatMul, which runs
// on the device's matrix engine; any other Einsum stays a host op. Matched: two operands, an
// explicit output, no ellipsis, every letter once per term, and
//   A = <batch> i j,  B = <batch> j k  (or <batch> k j, or either without the batch),
//   output = <batch> i k,
// with i, j, k distinct and not batch letters. The "k j" form reads B transposed: a constant
// B is transposed once here, a computed one through a Transpose node (an alias on the device,
// then a relayout copy for the MatMul). Rewritten in place, so names and outputs are kept.
#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "npu/compiler/pass.h"

namespace npu::compiler {

namespace {

/// The three terms of "a,b->o" (spaces removed), or false when the equation is not that form.
bool split_equation(std::string eq, std::string& a, std::string& b, std::string& o) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->"), comma = eq.find(',');
  if (arrow == std::string::npos || comma == std::string::npos || comma > arrow) return false;
  a = eq.substr(0, comma);
  b = eq.substr(comma + 1, arrow - comma - 1);
  o = eq.substr(arrow + 2);
  if (b.find(',') != std::string::npos || eq.find('.') != std::string::npos) return false;
  for (const std::string* t : {&a, &b, &o}) {
    std::string s = *t;
    std::sort(s.begin(), s.end());
    if (t->size() < 2 || std::adjacent_find(s.begin(), s.end()) != s.end()) return false;
    if (!std::all_of(t->begin(), t->end(), [](char c) { return std::isalpha(c) != 0; }))
      return false;
  }
  return true;
}

/// 0: not a matrix product; 1: A x B; 2: A x B^T (B given as <batch> k j).
int match(const std::string& a, const std::string& b, const std::string& o) {
  const std::string batch = a.substr(0, a.size() - 2);
  const char i = a[a.size() - 2], j = a[a.size() - 1];
  if (o.size() != a.size() || o.substr(0, batch.size()) != batch || o[o.size() - 2] != i) return 0;
  const char k = o.back();
  if (i == j || j == k || i == k) return 0;
  for (char c : {i, j, k})
    if (batch.find(c) != std::string::npos) return 0;
  if (b.size() != 2 && b.size() != a.size()) return 0;
  if (b.size() == a.size() && b.substr(0, batch.size()) != batch) return 0;
  const std::string bm = b.substr(b.size() - 2);
  if (bm == std::string{j, k}) return 1;
  if (bm == std::string{k, j}) return 2;
  return 0;
}

/// `t` with its last two dims swapped.
NpyArray swap_last_two(const NpyArray& t) {
  NpyArray out = t;
  const size_t r = t.shape.size();
  std::swap(out.shape[r - 1], out.shape[r - 2]);
  const int64_t rows = t.shape[r - 2], cols = t.shape[r - 1];
  const size_t es = format::dtype_size(t.dtype);
  const int64_t mats = rows * cols ? t.num_elements() / (rows * cols) : 0;
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t x = 0; x < rows; ++x)
      for (int64_t y = 0; y < cols; ++y)
        std::memcpy(out.data.data() + ((m * cols + y) * rows + x) * es,
                    t.data.data() + ((m * rows + x) * cols + y) * es, es);
  return out;
}

class EinsumToMatMulPass final : public Pass {
 public:
  std::string_view name() const override { return "einsum-to-matmul"; }

  Expected<bool> run(Graph& g) override {
    bool changed = false;
    std::vector<Node> nodes;
    nodes.reserve(g.nodes.size());
    for (Node& n : g.nodes) {
      std::string a, b, o;
      const int form = n.op_type == "Einsum" && n.domain.empty() && n.inputs.size() == 2 &&
                               n.input(0) >= 0 && n.input(1) >= 0 &&
                               split_equation(n.attr_string("equation", ""), a, b, o)
                           ? match(a, b, o)
                           : 0;
      const auto t = form ? g.value(n.input(0)).dtype : std::nullopt;
      if (!form || (t != DType::kFloat32 && t != DType::kFloat16) ||
          g.value(n.input(1)).dtype != t) {
        nodes.push_back(std::move(n));
        continue;
      }
      if (form == 2) {
        if (const NpyArray* c = g.constant(n.input(1))) {
          n.inputs[1] = g.add_constant(g.value(n.input(1)).name + "_t", swap_last_two(*c));
        } else {
          const Value& bv = g.value(n.input(1));
          Value tv;
          tv.name = g.unique_name(bv.name + "_t");
          tv.dtype = bv.dtype;
          if (bv.shape) {
            tv.shape = bv.shape;
            std::swap((*tv.shape)[tv.shape->size() - 1], (*tv.shape)[tv.shape->size() - 2]);
          }
          std::vector<int64_t> perm(b.size());
          for (size_t q = 0; q < perm.size(); ++q) perm[q] = static_cast<int64_t>(q);
          std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
          Node tr;
          tr.name = g.unique_name(n.name + "_transpose_b");
          tr.op_type = "Transpose";
          tr.opset = n.opset;
          tr.inputs = {n.input(1)};
          tr.attrs["perm"] = perm;
          tr.outputs = {g.add_value(std::move(tv))};
          n.inputs[1] = tr.outputs[0];
          nodes.push_back(std::move(tr));
        }
      }
      n.op_type = "MatMul";
      n.attrs.clear();
      // ONNX 1.12's Einsum shape inference gives only the rank: the product's shape is known
      // from static operand shapes (A's batch, A's rows, B's columns).
      const auto ad = g.value(n.input(0)).static_dims(), bd = g.value(n.input(1)).static_dims();
      Value& out = g.value(n.outputs[0]);
      if (ad && bd && !out.static_dims()) {
        std::vector<int64_t> od(ad->begin(), ad->end() - 1);
        od.push_back(bd->back());
        out.shape = make_shape(od);
      }
      nodes.push_back(std::move(n));
      changed = true;
    }
    g.nodes = std::move(nodes);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> create_EinsumToMatMulPass() {
  return std::make_unique<EinsumToMatMulPass>();
}

}  // namespace npu::compiler
