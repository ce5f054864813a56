// Helpers of the operator tests that call npu::ops::run() on small hand-made arrays: typed
// array constructors, a call with an opset, the single output of a call expected to succeed
// and the one-line error of a call expected to fail.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "npu/format/shape.h"
#include "npu/ops/ops.h"

namespace npu::ops::test {

using format::DType;
using format::NpyArray;
using json = nlohmann::json;
using Shape = std::vector<int64_t>;
using Ins = std::vector<const NpyArray*>;

inline NpyArray f32(Shape s, std::vector<float> v) {
  return NpyArray::of<float>(std::move(s), v);
}
inline NpyArray i64(Shape s, std::vector<int64_t> v) {
  return NpyArray::of<int64_t>(std::move(s), v);
}
inline NpyArray i32(Shape s, std::vector<int32_t> v) {
  return NpyArray::of<int32_t>(std::move(s), v);
}
/// 1, 2, ..., n as float32 of `shape`.
inline NpyArray iota_f32(Shape s) {
  std::vector<float> v(static_cast<size_t>(format::element_count(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
  return f32(std::move(s), v);
}

/// Runs `op` at `opset` (unless attrs has "_opset").
inline Expected<std::vector<NpyArray>> run_op(std::string_view op, const Ins& ins, json attrs,
                                              int64_t opset, const RunOptions& options = {},
                                              size_t num_outputs = 1) {
  if (!attrs.contains("_opset")) attrs["_opset"] = opset;
  return run(op, attrs.dump(), ins, num_outputs, options);
}

/// The error of `r`, a call of `op` expected to fail, checked to be one line that starts with
/// "<op>: ".
inline std::string one_line_error(std::string_view op, const Expected<std::vector<NpyArray>>& r) {
  EXPECT_FALSE(r) << op << " unexpectedly succeeded";
  if (r) return "";
  const std::string& m = r.error().message;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_EQ(m.rfind(std::string(op) + ": ", 0), 0u) << m;
  return m;
}

/// The single output of a call expected to succeed (an empty array after a failure).
inline NpyArray run1(std::string_view op, const Ins& ins, json attrs, int64_t opset) {
  auto r = run_op(op, ins, std::move(attrs), opset);
  EXPECT_TRUE(r) << r.error().message;
  if (!r || r->empty()) return {};
  return (*r)[0];
}

/// The one-line error of a call expected to fail; it starts with "<op>: ".
inline std::string error_of(std::string_view op, const Ins& ins, json attrs, int64_t opset,
                            const RunOptions& options = {}) {
  return one_line_error(op, run_op(op, ins, std::move(attrs), opset, options));
}

/// Element-wise |got - want| <= 1e-4 * max(1, |want|), with the shape.
inline void expect_near(const NpyArray& got, const Shape& shape, const std::vector<float>& want) {
  EXPECT_EQ(got.shape, shape);
  const auto v = got.view<float>();
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(v[i], want[i], 1e-4 * std::max(1.0f, std::abs(want[i]))) << "element " << i;
  }
}

}  // namespace npu::ops::test
