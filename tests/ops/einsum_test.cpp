// Einsum (ops/src/einsum.cpp) through npu::ops::run(): explicit and implicit outputs,
// transposes, traces and diagonals, sums, outer products, ellipsis broadcasting, integers,
// and the one-line errors (bad equations, mismatched dims, the work limit).
#include "op_test_util.h"

namespace npu::ops::test {
namespace {

using ::testing::HasSubstr;

NpyArray einsum(const std::string& eq, const Ins& ins) {
  return run1("Einsum", ins, {{"equation", eq}}, 12);
}

TEST(Einsum, MatmulExplicitAndImplicit) {
  const NpyArray a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const NpyArray b = f32({3, 2}, {1, 0, 0, 1, 1, 1});
  for (const char* eq : {"ij,jk->ik", "ij,jk", " i j , j k -> i k "}) {
    SCOPED_TRACE(eq);
    const NpyArray y = einsum(eq, {&a, &b});
    EXPECT_EQ(y.shape, (Shape{2, 2}));
    EXPECT_EQ(y.values<float>(), (std::vector<float>{4, 5, 10, 11}));
  }
  // Implicit output: labels in ASCII order, so "ji" transposes and "ba,a" is a matvec.
  const NpyArray t = einsum("ji", {&a});
  EXPECT_EQ(t.shape, (Shape{3, 2}));
  EXPECT_EQ(t.values<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  const NpyArray v = f32({3}, {1, 1, 1});
  EXPECT_EQ(einsum("ba,a", {&a, &v}).values<float>(), (std::vector<float>{6, 15}));
}

TEST(Einsum, DiagonalsTracesSumsAndOuterProducts) {
  const NpyArray m = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const NpyArray trace = einsum("ii", {&m});
  EXPECT_EQ(trace.shape, Shape{});
  EXPECT_EQ(trace.values<float>(), (std::vector<float>{15}));
  EXPECT_EQ(einsum("ii->i", {&m}).values<float>(), (std::vector<float>{1, 5, 9}));
  EXPECT_EQ(einsum("ij->", {&m}).values<float>(), (std::vector<float>{45}));
  EXPECT_EQ(einsum("ij->j", {&m}).values<float>(), (std::vector<float>{12, 15, 18}));
  const NpyArray p = f32({2}, {1, 2});
  const NpyArray q = f32({3}, {1, 10, 100});
  const NpyArray outer = einsum("i,j->ij", {&p, &q});
  EXPECT_EQ(outer.shape, (Shape{2, 3}));
  EXPECT_EQ(outer.values<float>(), (std::vector<float>{1, 10, 100, 2, 20, 200}));
  // Three operands: sum_ij p_i m_ij q_j.
  const NpyArray pm = f32({3}, {1, 0, 1});
  EXPECT_EQ(einsum("i,ij,j->", {&pm, &m, &pm}).values<float>(), (std::vector<float>{20}));
}

TEST(Einsum, EllipsisBroadcasts) {
  // Batch diagonal (ONNX's test_einsum_batch_diagonal form).
  std::vector<float> v(18);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const NpyArray x = f32({2, 3, 3}, v);
  const NpyArray d = einsum("...ii->...i", {&x});
  EXPECT_EQ(d.shape, (Shape{2, 3}));
  EXPECT_EQ(d.values<float>(), (std::vector<float>{0, 4, 8, 9, 13, 17}));
  // Batch dims broadcast: [2] against [1] (values from numpy.einsum).
  std::vector<float> av(12), bv(6);
  for (size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i);
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i);
  const NpyArray a = f32({2, 2, 3}, av);
  const NpyArray b = f32({1, 3, 2}, bv);
  const NpyArray y = einsum("...ij,...jk->...ik", {&a, &b});
  EXPECT_EQ(y.shape, (Shape{2, 2, 2}));
  EXPECT_EQ(y.values<float>(), (std::vector<float>{10, 13, 28, 40, 46, 67, 64, 94}));
  // Implicit output puts the ellipsis dims first.
  EXPECT_EQ(einsum("...ij,...jk", {&a, &b}).shape, (Shape{2, 2, 2}));
  // An explicit output needs "..." for them, as NumPy says.
  EXPECT_THAT(error_of("Einsum", {&x}, {{"equation", "...ii->i"}}, 12),
              HasSubstr("the output term needs '...' for the 1 broadcast dims"));
}

TEST(Einsum, IntegersAndEmptySums) {
  const NpyArray a = i64({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(einsum("ij,jk->ik", {&a, &a}).values<int64_t>(), (std::vector<int64_t>{7, 10, 15, 22}));
  const NpyArray i8 = NpyArray::of<int8_t>({2}, std::vector<int8_t>{100, 100});
  EXPECT_EQ(einsum("i->", {&i8}).values<int8_t>(), (std::vector<int8_t>{-56}));  // wraps
  const NpyArray e = f32({2, 0}, {});
  EXPECT_EQ(einsum("ij->i", {&e}).values<float>(), (std::vector<float>{0, 0}));
}

TEST(Einsum, Errors) {
  const NpyArray a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const NpyArray b = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const auto err = [&](const std::string& eq, const Ins& ins) {
    return error_of("Einsum", ins, {{"equation", eq}}, 12);
  };
  EXPECT_THAT(err("ij,jk->ik", {&a}), HasSubstr("equation has 2 input terms for 1 inputs"));
  EXPECT_THAT(err("ij,jk->ik", {&a, &b}),
              HasSubstr("input 1 of shape [2, 3]: dim 0 of size 2 does not match 3 elsewhere"));
  EXPECT_THAT(err("ijk", {&a}), HasSubstr("input 0 of shape [2, 3] does not match its equation"));
  EXPECT_THAT(err("i1", {&a}), HasSubstr("invalid character '1'"));
  EXPECT_THAT(err("ij->ii", {&a}), HasSubstr("output label 'i' is repeated"));
  EXPECT_THAT(err("ij->k", {&a}), HasSubstr("output label 'k' is not in any input"));
  EXPECT_THAT(err("..i", {&a}), HasSubstr("malformed or repeated ellipsis"));
  const NpyArray n = i64({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(err("ij,ij->", {&a, &n}), HasSubstr("inputs have different dtypes"));
  EXPECT_THAT(error_of("Einsum", {&a}, json::object(), 12), HasSubstr("missing attribute"));
  // The work (outputs x summed positions x inputs) is checked before the output is allocated.
  RunOptions little;
  little.max_work = 10;
  auto r = run_op("Einsum", {&a, &b}, {{"equation", "ij,kl->ijkl"}}, 12, little);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, EFBIG);
  EXPECT_THAT(r.error().message, HasSubstr("Einsum: 72 multiply-adds (36 outputs × 2)"));
}

}  // namespace
}  // namespace npu::ops::test
