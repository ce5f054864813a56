// Private: the names of the package metadata's enums and features, shared by the JSON reader
// (package_metadata.cpp) and writer (package_metadata_write.cpp) so both spell them alike.
#pragma once

#include <cstdint>
#include <string>

#include "npu/format/package_metadata.h"
#include "npu_isa.h"

namespace npu::format::detail {

struct FeatureName {
  const char* name;
  uint64_t bit;
};
constexpr FeatureName kFeatures[] = {
    {"int8", NPU_FEATURE_INT8},
    {"fp32", NPU_FEATURE_FP32},
    {"transcendental", NPU_FEATURE_TRANSCENDENTAL},
    {"fp16", NPU_FEATURE_FP16},
};

template <typename E>
struct EnumName {
  E value;
  const char* name;
};
constexpr EnumName<TensorRole> kRoles[] = {{TensorRole::kInput, "input"},
                                           {TensorRole::kOutput, "output"},
                                           {TensorRole::kConstant, "constant"},
                                           {TensorRole::kIntermediate, "intermediate"}};
constexpr EnumName<Layout> kLayouts[] = {
    {Layout::kPlain, "plain"}, {Layout::kNHWC, "NHWC"}, {Layout::kNCHW, "NCHW"}};
constexpr EnumName<BufferKind> kBufferKinds[] = {{BufferKind::kConstants, "constants"},
                                                 {BufferKind::kActivations, "activations"},
                                                 {BufferKind::kInput, "input"},
                                                 {BufferKind::kOutput, "output"}};
constexpr EnumName<Access> kAccesses[] = {
    {Access::kRead, "read"}, {Access::kWrite, "write"}, {Access::kReadWrite, "readwrite"}};
constexpr EnumName<SegmentKind> kSegmentKinds[] = {{SegmentKind::kDevice, "device"},
                                                   {SegmentKind::kHost, "host"}};

template <typename E, size_t N>
const char* enum_name(const EnumName<E> (&table)[N], E v) {
  for (const auto& e : table) {
    if (e.value == v) return e.name;
  }
  return "unknown";
}

template <typename E, size_t N>
std::string enum_choices(const EnumName<E> (&table)[N]) {
  std::string s;
  for (const auto& e : table) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

}  // namespace npu::format::detail
