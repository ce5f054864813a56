// The operator registry: what the stack knows about each operator, from the one table in
// npu/ops/operators.def — its name, the opsets whose semantics it follows, the element types
// of its main input, its output shape rule, the compiler's device lowering family and its
// attribute schema — together with its host implementation. The runtime (host segments),
// the compiler (import check, constant folding, support check, lowering dispatch) and the
// tools read it; nothing else lists operators.
//
// Threading: the registry is built once, on first use, and read-only afterwards; every
// function here may be called from any thread. Lifetime: the schemas are static.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npu/expected.h"
#include "npu/format/dtype.h"
#include "npu/format/npy.h"

namespace npu::ops {

/// A set of element types, one bit per format::DType.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<format::DType> types) {
    for (format::DType t : types) bits_ |= bit(t);
  }
  constexpr bool contains(format::DType t) const { return (bits_ & bit(t)) != 0; }
  constexpr DTypeSet operator|(DTypeSet o) const {
    DTypeSet s;
    s.bits_ = bits_ | o.bits_;
    return s;
  }
  constexpr bool operator==(const DTypeSet&) const = default;
  /// "float32, float64" (the table's order).
  std::string to_string() const;

 private:
  static constexpr uint32_t bit(format::DType t) { return uint32_t{1} << static_cast<int>(t); }
  uint32_t bits_ = 0;
};

/// The named sets the registry's Types column uses.
namespace types {
using format::DType;
inline constexpr DTypeSet Float{DType::kFloat32};
inline constexpr DTypeSet Floats{DType::kFloat32, DType::kFloat64};
inline constexpr DTypeSet Signed{DType::kFloat32, DType::kFloat64, DType::kInt8,
                                 DType::kInt16,   DType::kInt32,   DType::kInt64};
inline constexpr DTypeSet Numeric{DType::kFloat32, DType::kFloat64, DType::kInt8,  DType::kUint8,
                                  DType::kInt16,   DType::kUint16,  DType::kInt32, DType::kUint32,
                                  DType::kInt64,   DType::kUint64};
inline constexpr DTypeSet Reducible{DType::kFloat32, DType::kFloat64, DType::kInt8,
                                    DType::kUint8,   DType::kInt32,   DType::kInt64};
inline constexpr DTypeSet Range{DType::kFloat32, DType::kFloat64, DType::kInt16, DType::kInt32,
                                DType::kInt64};
inline constexpr DTypeSet Pooled{DType::kFloat32, DType::kInt8, DType::kUint8};
inline constexpr DTypeSet Bool{DType::kBool};
inline constexpr DTypeSet Int8{DType::kInt8, DType::kUint8};
inline constexpr DTypeSet QuantizeIn{DType::kFloat32, DType::kInt32};
inline constexpr DTypeSet DequantizeIn{DType::kInt8, DType::kUint8, DType::kInt32};
inline constexpr DTypeSet Any = Numeric | DTypeSet{DType::kBool, DType::kFloat16};
}  // namespace types

/// How an operator's output shapes follow from its inputs.
enum class ShapeRule : uint8_t {
  kImpl,       // computed by the implementation (data-dependent or op-specific)
  kSame,       // output 0 has input 0's dtype and shape
  kBroadcast,  // output 0: input 0's dtype, the NumPy broadcast of every input's shape
  kCompare,    // output 0: bool, the NumPy broadcast of every input's shape
};

enum class AttrType : uint8_t { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor };
/// "int", "floats", ...
const char* attr_type_name(AttrType t);

struct AttrSchema {
  std::string name;
  AttrType type = AttrType::kInt;
  bool required = false;
  std::optional<std::string> default_value;  // "0.01", "none": read by the implementation
                                             // and the compiler alike
  /// The default as a number (0 without one).
  double number_default() const;
};

/// Parses an attribute schema in the registry's syntax ("name:type[=default][!] ..." separated
/// by spaces; the Attributes column of operators.def). Schema tables are part of the program,
/// so a malformed entry is a programming error: it aborts, naming `owner` ("operators.def:
/// Conv"), on first use — which every test run reaches. Other tables written in the same syntax
/// (the compiler's TVM attribute schemas, npu/compiler/tvm_ops.def) parse theirs with it.
std::vector<AttrSchema> parse_attribute_schema(std::string_view owner, std::string_view text);

struct OpCall;  // one call of a host implementation (private to the library)
using HostFn = Expected<std::vector<format::NpyArray>> (*)(const OpCall&);

/// The input slots that only parameterize an operator (the Params column): weights, scales,
/// shapes, pads, axes — constant at compile time.
struct ParamSlots {
  uint64_t slots = 0;  // bit i: slot i (i < 64)
  int from = -1;       // >= 0: every slot from this one on
  bool has(size_t i) const {
    return (from >= 0 && i >= static_cast<size_t>(from)) || (i < 64 && ((slots >> i) & 1) != 0);
  }
};

/// What the int8 quantizer does with an operator (the Int8 column).
enum class Int8Rule : uint8_t {
  kRequantized,  // dequantized around it, or a quantized form of its own
  kThrough,      // selects, moves or reorders elements: runs on int8 data as it is
};

/// When an operator passes its input 0 through unchanged (the Identity column; the
/// remove-identities pass applies the rule, operators.def says what each means).
enum class IdentityRule : uint8_t {
  kNever,
  kAlways,
  kInference,
  kSameShape,
  kOneInput,
  kIdentityPerm,
  kZeroPads,
  kFullSlice,
  kPlusZero,
  kMinusZero,
  kTimesOne,
  kOverOne,
};

struct OpSchema {
  std::string_view name;
  std::string_view domain;       // "": ONNX's default domain; "npu": the stack's own (internal)
  int64_t since = 1, until = 1;  // model opsets whose semantics the implementation follows
  DTypeSet types;                // accepted element types of input 0
  ShapeRule shape = ShapeRule::kImpl;
  std::string_view device;     // the compiler's device family ("Host": none)
  uint8_t code = 0;            // the ISA function within the family (NPU_ACT_*, ...; 0: none)
  std::string_view host_name;  // the Host column (the implementation's name)
  std::vector<AttrSchema> attributes;
  HostFn host = nullptr;
  ParamSlots params;
  Int8Rule int8 = Int8Rule::kRequantized;
  IdentityRule identity = IdentityRule::kNever;

  /// The attribute named `attr`, or nullptr.
  const AttrSchema* attribute(std::string_view attr) const;
  /// The default of attribute `attr` as a number (0 when it has none).
  double number_default(std::string_view attr) const;
  /// Whether `opset` is in [since, until].
  bool supports_opset(int64_t opset) const { return opset >= since && opset <= until; }
};

/// Every operator, in the table's order.
std::span<const OpSchema> registry();
/// The operator named `op_type` (default ONNX domain), or nullptr.
const OpSchema* find(std::string_view op_type);

/// An element type and static shape (what a shape rule reads and produces).
struct TensorType {
  format::DType dtype = format::DType::kFloat32;
  std::vector<int64_t> shape;
  bool operator==(const TensorType&) const = default;
};

/// Output 0's type by the operator's shape rule; nullopt for ShapeRule::kImpl (and unknown
/// operators). An error when the inputs do not fit the rule (shapes that do not broadcast).
Expected<std::optional<TensorType>> infer_output(std::string_view op_type,
                                                 std::span<const TensorType> inputs);

}  // namespace npu::ops
