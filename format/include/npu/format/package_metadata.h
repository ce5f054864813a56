// PackageMetadata: the typed mirror of a model package's JSON metadata (docs/package.md §3):
// model identity, target requirements, tensors with their quantization and placement, device
// buffers, segments in execution order (device command buffers and host ops) and the graph's
// inputs and outputs. Conversion to and from JSON text checks structure (keys, types, enum
// names); cross-references are checked by validate_package() (package.h). Plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "npu/expected.h"
#include "npu/format/dtype.h"
#include "npu/format/shape.h"

namespace npu::format {

enum class TensorRole : uint8_t { kInput, kOutput, kConstant, kIntermediate };
/// Element order of a tensor in its buffer. kPlain: C order of the logical shape (or the
/// explicit strides); kNHWC: a 4-D NCHW tensor stored channels-last; kNCHW: stored as is.
enum class Layout : uint8_t { kPlain, kNHWC, kNCHW };
/// kConstants: filled from a CONSTANTS section; kActivations: the arena of intermediates;
/// kInput / kOutput: one per graph input / output, filled / read by the runtime.
enum class BufferKind : uint8_t { kConstants, kActivations, kInput, kOutput };
enum class Access : uint8_t { kRead = 1, kWrite = 2, kReadWrite = 3 };
enum class SegmentKind : uint8_t { kDevice, kHost };

/// Affine quantization real = scale * (q - zero_point): per tensor (one scale, no axis) or per
/// axis (one scale and zero point per index of `axis`).
struct Quantization {
  std::vector<double> scale = {};
  std::vector<int64_t> zero_point = {};
  std::optional<int32_t> axis = {};
  bool operator==(const Quantization&) const = default;
};

/// Where a tensor lives: bytes [offset, offset + size) of a buffer. strides (bytes, one per
/// dim of the stored order) are empty for a dense tensor.
struct TensorLocation {
  std::string buffer = {};
  uint64_t offset = 0;
  uint64_t size = 0;
  Layout layout = Layout::kPlain;
  std::vector<int64_t> strides = {};
  bool operator==(const TensorLocation&) const = default;
};

struct TensorInfo {
  std::string name = {};
  DType dtype = DType::kFloat32;
  std::vector<Dim> shape = {};
  TensorRole role = TensorRole::kIntermediate;
  std::optional<Quantization> quantization = {};
  std::optional<TensorLocation> location = {};  // none: lives only on the host
  bool operator==(const TensorInfo&) const = default;
};

/// A device buffer the runtime allocates at the fixed device virtual address the command
/// buffers were compiled against.
struct BufferInfo {
  std::string name = {};
  BufferKind kind = BufferKind::kActivations;
  uint64_t size = 0;
  uint64_t address = 0;
  std::optional<uint32_t> section = {};  // kConstants: the CONSTANTS section with its contents
  bool operator==(const BufferInfo&) const = default;
};

struct BufferUse {
  std::string buffer = {};
  Access access = Access::kRead;
  bool operator==(const BufferUse&) const = default;
};

/// One row of the compiler's per-layer report (npu-compile --report).
struct LayerReport {
  std::string name = {};
  std::string op = {};
  std::string engine = {};
  uint64_t tiles = 0;
  uint64_t macs = 0;
  uint64_t bytes = 0;           // DRAM bytes moved
  uint64_t cycles = 0;          // estimated
  uint64_t compute_cycles = 0;  // of which the compute engine is busy (utilization)
  bool operator==(const LayerReport&) const = default;
};

/// A unit of execution. Device segments run one command buffer; host segments run one
/// operator on the host. Fields of the other kind stay at their defaults.
struct Segment {
  SegmentKind kind = SegmentKind::kDevice;
  std::string name = {};
  std::vector<std::string> inputs = {};
  std::vector<std::string> outputs = {};
  // kDevice
  uint32_t command_buffer = 0;  // section index
  std::vector<BufferUse> buffers = {};
  std::vector<LayerReport> layers = {};
  uint64_t estimated_cycles = 0;
  // kHost
  std::string op_type = {};       // ONNX op type, e.g. "Softmax"
  std::string attributes = "{}";  // a JSON object, compact with sorted keys
  bool operator==(const Segment&) const = default;
};

struct ModelInfo {
  std::string name = {};
  std::string producer = {};  // e.g. "npu-compile 0.1.0"
  std::string version = {};
  std::string source = {};  // e.g. the source model's file name
  std::string description = {};
  bool operator==(const ModelInfo&) const = default;
};

/// What the package was compiled for; the runtime refuses a device that cannot run it.
struct TargetInfo {
  uint16_t isa_major = 1;
  uint16_t isa_minor = 0;
  uint64_t features = 0;    // NPU_FEATURE_* bits the command buffers need
  uint64_t sram_size = 0;   // SRAM bytes the tiling assumed (0: none)
  std::string device = {};  // device config name, informational
  bool operator==(const TargetInfo&) const = default;
};

struct PackageMetadata {
  ModelInfo model;
  TargetInfo target;
  std::vector<TensorInfo> tensors = {};
  std::vector<BufferInfo> buffers = {};
  std::vector<Segment> segments = {};
  std::vector<std::string> inputs = {};   // graph inputs, in order
  std::vector<std::string> outputs = {};  // graph outputs, in order

  const TensorInfo* find_tensor(std::string_view name) const;
  const BufferInfo* find_buffer(std::string_view name) const;
  bool operator==(const PackageMetadata&) const = default;
};

const char* role_name(TensorRole r);
const char* layout_name(Layout l);
const char* buffer_kind_name(BufferKind k);
const char* access_name(Access a);
const char* segment_kind_name(SegmentKind k);

/// The metadata as JSON text (2-space indent, sorted keys): deterministic, so a package
/// serializes to the same bytes every time. Attributes that are not a JSON object are
/// written as {} (validate_package() rejects them first).
std::string metadata_to_json(const PackageMetadata& m);

/// Parses metadata JSON text. `where` prefixes errors ("model.npub: metadata"). Unknown keys
/// are errors unless allow_unknown_keys (a package from a newer minor version).
Expected<PackageMetadata> metadata_from_json(std::string_view text, std::string_view where,
                                             bool allow_unknown_keys = false);

}  // namespace npu::format
