// The conformance runner's comparison (ONNX tolerances, NaN, exact integers, shapes and
// dtypes), its expected-failures list, and read_tensor_pb of libnpuc.
#include "conformance.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "npu/compiler/onnx_tensor.h"

namespace npu::conformance {
namespace {

using format::DType;
using format::NpyArray;

NpyArray floats(std::vector<int64_t> shape, std::vector<float> v) {
  return NpyArray::of<float>(std::move(shape), v);
}

TEST(Compare, FloatsWithinOnnxTolerancesMatch) {
  const NpyArray want = floats({3}, {1.0f, 100.0f, 0.0f});
  EXPECT_EQ(compare(floats({3}, {1.0009f, 100.09f, 5e-8f}), want), "");
  const std::string diff = compare(floats({3}, {1.0f, 100.2f, 0.0f}), want);
  EXPECT_NE(diff.find("element 1 [1]: got 100.19"), std::string::npos) << diff;
  EXPECT_NE(diff.find("1 of 3 elements differ"), std::string::npos) << diff;
  EXPECT_NE(compare(floats({3}, {1.0f, 100.0f, 2e-7f}), want), "");  // atol 1e-7
}

TEST(Compare, NanEqualsNanAndInfinitiesMustAgree) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(compare(floats({2}, {nan, inf}), floats({2}, {nan, inf})), "");
  EXPECT_NE(compare(floats({1}, {1.0f}), floats({1}, {nan})), "");
  EXPECT_NE(compare(floats({1}, {nan}), floats({1}, {1.0f})), "");
  EXPECT_NE(compare(floats({1}, {-inf}), floats({1}, {inf})), "");
}

TEST(Compare, IntegersAndBoolAreExact) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(compare(NpyArray::of<int64_t>({2}, V{1, 2}), NpyArray::of<int64_t>({2}, V{1, 2})), "");
  EXPECT_EQ(compare(NpyArray::of<int64_t>({2, 2}, V{1, 2, 3, 5}),
                    NpyArray::of<int64_t>({2, 2}, V{1, 2, 3, 4})),
            "element 3 [1, 1]: got 5, expected 4 (1 of 4 elements differ, max abs diff 1)");
  NpyArray t = NpyArray::of<bool>({2}, std::vector<bool>{true, false});
  NpyArray t2 = t;
  t2.data[0] = std::byte{1};
  EXPECT_EQ(compare(t, t2), "");
  t2.data[1] = std::byte{1};
  EXPECT_NE(compare(t, t2), "");
}

TEST(Compare, ShapeAndDtypeMustAgree) {
  EXPECT_EQ(compare(floats({2, 1}, {1, 2}), floats({1, 2}, {1, 2})),
            "shape [2, 1], expected [1, 2]");
  EXPECT_EQ(compare(NpyArray::zeros(DType::kInt32, {2}), NpyArray::zeros(DType::kInt64, {2})),
            "dtype int32, expected int64");
  EXPECT_EQ(compare(floats({}, {1}), floats({1}, {1})), "shape [], expected [1]");
}

TEST(ExpectedFailures, NamesWithReasons) {
  auto l = parse_expected_failures(
      "# header\n\nnode/test_a   # rounds half away from zero\n  node/test_b\n", "x.txt");
  ASSERT_TRUE(l) << l.error().message;
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ(l->at("node/test_a"), "rounds half away from zero");
  EXPECT_EQ(l->at("node/test_b"), "");
}

TEST(ExpectedFailures, RejectsDuplicatesAndStrayWords) {
  auto dup = parse_expected_failures("a\na\n", "x.txt");
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().message, "x.txt:2: 'a' listed twice");
  auto stray = parse_expected_failures("a reason without hash\n", "x.txt");
  ASSERT_FALSE(stray);
  EXPECT_NE(stray.error().message.find("x.txt:1: 'reason'"), std::string::npos);
}

// read_tensor_pb (libnpuc) on files written here: raw_data, typed fields, unsupported types.
class TensorPb : public ::testing::Test {
 protected:
  std::string write(const onnx::TensorProto& t) {
    const std::string path = (dir_ / ("t" + std::to_string(n_++) + ".pb")).string();
    std::ofstream f(path, std::ios::binary);
    t.SerializeToOstream(&f);
    return path;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_ = [] {
    auto d =
        std::filesystem::temp_directory_path() / ("npu_tensor_pb_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  int n_ = 0;
};

TEST_F(TensorPb, ReadsTypedAndRawTensors) {
  onnx::TensorProto f;
  f.set_data_type(onnx::TensorProto::FLOAT);
  f.add_dims(2);
  f.add_float_data(1.5f);
  f.add_float_data(-2.0f);
  auto a = compiler::read_tensor_pb(write(f));
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(*a, floats({2}, {1.5f, -2.0f}));

  onnx::TensorProto b;
  b.set_data_type(onnx::TensorProto::BOOL);
  b.add_dims(3);
  b.set_raw_data(std::string("\x01\x00\x01", 3));
  auto ba = compiler::read_tensor_pb(write(b));
  ASSERT_TRUE(ba) << ba.error().message;
  EXPECT_EQ(*ba, NpyArray::of<bool>({3}, std::vector<bool>{true, false, true}));

  onnx::TensorProto i;
  i.set_data_type(onnx::TensorProto::INT64);
  i.add_int64_data(-7);  // a scalar
  auto ia = compiler::read_tensor_pb(write(i));
  ASSERT_TRUE(ia) << ia.error().message;
  EXPECT_EQ(*ia, NpyArray::of<int64_t>({}, std::vector<int64_t>{-7}));
}

TEST_F(TensorPb, UnsupportedTypesAndBadFilesNameTheFile) {
  onnx::TensorProto h;
  h.set_data_type(onnx::TensorProto::BFLOAT16);
  h.add_dims(1);
  h.set_raw_data(std::string(2, '\0'));
  const std::string path = write(h);
  auto a = compiler::read_tensor_pb(path);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, ENOTSUP);
  EXPECT_EQ(a.error().message, path + ": unsupported element type BFLOAT16");

  const std::string missing = (dir_ / "missing.pb").string();
  auto m = compiler::read_tensor_pb(missing);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().message.rfind(missing + ": ", 0), 0u) << m.error().message;

  const std::string junk = (dir_ / "junk.pb").string();
  std::ofstream(junk, std::ios::binary) << "\xff\xff\xff";
  auto j = compiler::read_tensor_pb(junk);
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().message.rfind(junk + ": ", 0), 0u) << j.error().message;
}

}  // namespace
}  // namespace npu::conformance
