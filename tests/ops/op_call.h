// Test helpers: build small arrays and call an operator through npu::ops::run() with JSON
// attributes ("_opset" 17 unless given), checking that an error is one line that starts
// with the op's name; a default-opset front end to op_test_util.h. Header-only, for the tests
// of tests/ops/.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "npu/ops/ops.h"
#include "npu/ops/registry.h"
#include "op_test_util.h"

namespace npu::ops::testing {

using format::DType;
using format::NpyArray;
using test::f32;
using test::i64;
using test::Ins;
using test::json;
using test::Shape;

template <typename T>
NpyArray arr(Shape s, std::vector<T> v) {
  return NpyArray::of<T>(std::move(s), v);
}
/// A 0-d int64 tensor.
inline NpyArray scalar_i64(int64_t v) {
  return i64({}, {v});
}

inline Expected<std::vector<NpyArray>> call(std::string_view op, Ins ins,
                                            json attrs = json::object(), size_t num_outputs = 1,
                                            const RunOptions& options = {}) {
  return test::run_op(op, ins, std::move(attrs), 17, options, num_outputs);
}

/// The outputs of a call expected to succeed (empty after a failure, which is reported).
inline std::vector<NpyArray> outputs(std::string_view op, Ins ins, json attrs = json::object(),
                                     size_t num_outputs = 1) {
  auto r = call(op, std::move(ins), std::move(attrs), num_outputs);
  EXPECT_TRUE(r) << r.error().message;
  if (!r) return {};
  EXPECT_EQ(r->size(), num_outputs);
  return std::move(*r);
}

/// The single output of a call expected to succeed.
inline NpyArray output(std::string_view op, Ins ins, json attrs = json::object()) {
  auto r = outputs(op, std::move(ins), std::move(attrs));
  return r.empty() ? NpyArray{} : r[0];
}

/// The error message of a call expected to fail (one line, "<op>: ...").
inline std::string error_of(std::string_view op, Ins ins, json attrs = json::object(),
                            size_t num_outputs = 1) {
  return test::one_line_error(op, call(op, std::move(ins), std::move(attrs), num_outputs));
}

/// Expects `got` to hold `want` within a relative 1e-6 (float) and to have shape `shape`.
template <typename T>
void expect_near(const NpyArray& got, const Shape& shape, const std::vector<double>& want) {
  EXPECT_EQ(got.shape, shape);
  const auto v = got.view<T>();
  ASSERT_EQ(v.size(), want.size()) << "dtype " << format::dtype_name(got.dtype);
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(static_cast<double>(v[i]), want[i], 1e-6 * (1.0 + std::abs(want[i])))
        << "element " << i;
  }
}

}  // namespace npu::ops::testing
