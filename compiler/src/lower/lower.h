// Private: lowering of a partitioned Graph to a model package. lower.cpp plans memory (a
// constants buffer, an activation arena reused by liveness), walks the segments in order and
// writes the package; lower_ops.cpp maps each device node onto npu/codegen ops. Tensors on
// the device are stored densely in some permutation of their logical (ONNX) dims: `perm[j]`
// is the logical dim stored j-th (channels-last for convolutions and pools, identity for
// most other ops); a permutation change is a TRANSPOSE layer or, for Transpose nodes and
// reshapes of identity-ordered tensors, no data movement at all (an alias).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "npu/codegen/emit.h"
#include "npu/compiler/graph.h"
#include "npu/compiler/support.h"
#include "npu/expected.h"
#include "npu/format/package.h"
#include "npu/isa/device_config.h"

namespace npu::compiler::detail {

struct LowerOptions {
  isa::DeviceConfig cfg;
  std::string model_name, source, producer;
};

/// A lowering failure; `node` is the index of the node that could not be lowered (-1: not
/// specific to one node), so the driver can move it to the host and try again.
struct LowerError {
  Error error;
  int node = -1;
};

/// Lowers every segment of `p` and builds the package.
std::variant<format::Package, LowerError> lower(const Graph& g, const Partition& p,
                                                const LowerOptions& o);

using Perm = std::vector<int>;

/// Identity permutation of rank r.
Perm identity_perm(size_t rank);
/// Channels-last permutation of rank r (3: [0, 2, 1], 4: [0, 2, 3, 1]).
Perm channels_last_perm(size_t rank);

/// A device tensor's storage: a byte range of a buffer holding the logical dims densely in
/// the order `perm`.
struct Storage {
  uint64_t va = 0;
  uint64_t bytes = 0;
  int alloc = -1;  // arena allocation id (-1: constants or not in the arena)
  Perm perm;
};

/// The state shared by the lowering of one package.
class Lowering {
 public:
  Lowering(const Graph& g, const LowerOptions& o);

  const Graph& g;
  const LowerOptions& opt;

  // ---- constants buffer ----
  static constexpr uint64_t kConstantsVa = 0x80'0000'0000ull;
  static constexpr uint64_t kArenaVa = 0x1'0000'0000ull;
  std::vector<std::byte> constants;
  std::unordered_multimap<size_t, uint64_t> blob_index;  // hash of a blob -> its offset
  /// Appends `bytes` (64-byte aligned) and returns its device VA; identical blobs are shared.
  uint64_t add_constant(std::span<const std::byte> bytes);
  /// A graph constant stored plainly (ONNX order) in the constants buffer, converted to
  /// `dtype` if given (integers to float, say).
  Expected<Storage> constant_storage(ValueId v, std::optional<DType> as = std::nullopt);

  // ---- activation arena ----
  struct Alloc {
    uint64_t offset = 0, size = 0;
    int refs = 0;
  };
  std::vector<Alloc> allocs;
  std::map<uint64_t, uint64_t> free_list;  // offset -> size
  uint64_t arena_size = 0;
  int arena_alloc(uint64_t bytes);
  void arena_release(int alloc);

  // ---- values ----
  std::vector<std::optional<Storage>> storage;  // by ValueId
  /// Dims of a value (static), or an error naming it.
  Expected<std::vector<int64_t>> dims(ValueId v) const;
  /// Allocates arena storage for v in `perm` (one ref held by v).
  Expected<Storage> define(ValueId v, Perm perm);
  /// define() and the codegen view of the new storage.
  Expected<codegen::TensorDesc> define_desc(ValueId v, Perm perm);
  /// v shares `src`'s bytes (reshapes, transposes by permutation).
  void alias(ValueId v, const Storage& src, Perm perm);
  /// Storage of v (constants are placed on first use).
  Expected<Storage> get(ValueId v);

  // ---- device segment being emitted ----
  isa::CommandBufferBuilder* builder = nullptr;
  codegen::SemAllocator* sems = nullptr;
  std::vector<codegen::LayerReport> layers;
  /// Copies of a value in another storage order (TRANSPOSE layers), reused by later readers
  /// and freed with the value.
  std::map<std::pair<ValueId, Perm>, Storage> relayouts;
  void release_relayouts(ValueId v);
  /// Emits one layer (a FENCE first unless it is the segment's first layer).
  template <typename Op>
  Expected<void> layer(const Op& op,
                       Expected<codegen::LayerReport> (*emit)(const Op&, codegen::EmitContext&));

  /// Codegen view of v in its stored order (dims physical, contiguous).
  Expected<codegen::TensorDesc> physical(ValueId v);
  /// v stored in `perm`: its own storage, an alias when only size-1 dims move, or a
  /// transposed copy (a TRANSPOSE layer, made once per value and order).
  Expected<Storage> storage_in_perm(ValueId v, const Perm& perm);
  Expected<codegen::TensorDesc> in_perm(ValueId v, const Perm& perm);
  /// Codegen view of a storage of v (dims in the storage's order, contiguous).
  Expected<codegen::TensorDesc> desc(ValueId v, const Storage& s) const;
  /// Logical-order strided view of v (dims in ONNX order, strides from its storage).
  Expected<codegen::TensorDesc> logical_view(ValueId v);

  /// Lowers one device node (lower_ops.cpp).
  Expected<void> lower_node(const Node& n);
};

/// NPU_DTYPE_* of an IR dtype, or an error.
Expected<uint8_t> npu_dtype(DType t, const std::string& what);

}  // namespace npu::compiler::detail
