// Private: the ONNX importer's way around protobuf's copy of the weights. Parsing a ModelProto
// copies every initializer's raw_data into a std::string (ResNet-50: 100 MB of fresh memory,
// whose page faults were a fifth of the compile time); the importer then copied them once more
// into the IR's arrays. split_weights() walks the protobuf wire format of the model bytes and
// returns a copy of them without the raw_data of large floating-point initializers (a valid
// ModelProto encoding, a few hundred KB), plus where each cut raw_data lies in the original
// bytes; the importer parses the small copy and builds each such constant straight from the
// original bytes (one copy instead of two).
//
// Lifetime: the spans point into the `model` bytes given to split_weights(); they are valid
// only as long as those bytes (import_onnx_bytes()'s argument, the mapped file of
// import_onnx()), and are used only during the import: every constant of the IR is a copy
// (an NpyArray that owns its data), so no Graph refers to the model bytes. Pure functions, no
// state, thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace npu::compiler::detail {

/// Initializers whose raw_data is at least this large (and whose type is FLOAT, FLOAT16,
/// DOUBLE or BFLOAT16) are cut out. ONNX shape inference reads the values of shape operands
/// only (small int64 tensors, a few float scales), so what it sees of the model is unchanged.
inline constexpr size_t kSplitWeightBytes = 4096;

/// A ModelProto's bytes with large weights cut out (see the file comment).
struct SplitModel {
  std::string proto;  // the model without the cut raw_data fields: parse this
  /// One entry per GraphProto.initializer in wire order (the order protobuf parses them in):
  /// the raw_data bytes cut from it, or nullopt when it was kept as is.
  std::vector<std::optional<std::span<const std::byte>>> cut;
};

/// Splits `model` (the bytes of a ModelProto), or nullopt when its wire format is not what
/// the walk understands (malformed bytes, groups): the caller then parses `model` as is, and
/// protobuf reports what is wrong. Nothing is cut (`cut` all nullopt) when no initializer is
/// large enough; the copy is still made.
std::optional<SplitModel> split_weights(std::string_view model,
                                        size_t min_bytes = kSplitWeightBytes);

}  // namespace npu::compiler::detail
