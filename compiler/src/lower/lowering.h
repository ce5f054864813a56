// Private: the state shared while one package is lowered (lower.cpp creates one Lowering per
// lower() call and drops it at the end; single-threaded). It owns the memory plan (the
// constants buffer and the activation arena, memory.h), the storage of every value placed on
// the device so far (storage.h; methods in storage.cpp), and, while a device segment is being
// emitted (device_segment.cpp), its command-buffer builder, semaphores and layer reports.
// The per-op lowerings (lower_ops.h) read the graph and write layers through it.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "lower/lower.h"
#include "lower/memory.h"
#include "lower/storage.h"
#include "npu/codegen/emit.h"
#include "npu/compiler/graph.h"
#include "npu/expected.h"

namespace npu::compiler::detail {

class Lowering {
 public:
  Lowering(const Graph& graph, const LowerOptions& o)
      : g(graph), opt(o), storage(graph.num_values()), keeps_type(graph.num_values(), false) {}

  const Graph& g;
  const LowerOptions& opt;

  // ---- memory plan (memory.h) ----
  ConstantBuffer constants;
  Arena arena;

  // ---- values (storage.cpp) ----
  std::vector<std::optional<Storage>> storage;  // by ValueId
  /// By ValueId: the runtime or another segment reads or writes v, so it is stored in its
  /// graph type whatever the precision (set by lower() before the first segment).
  std::vector<bool> keeps_type;
  /// NPU_DTYPE_* v is stored in when defined on the device (0: not a device type).
  uint8_t stored_dtype(ValueId v) const;
  /// The half-precision type a conv/matmul with weights (or B) of graph type `t` runs in on
  /// the matrix engine (fp16 for float16 models, the precision for float32), or 0.
  uint8_t matrix_half(std::optional<DType> t) const;
  /// Float32 or float16 elements (`from`) as `dtype` (fp16/bf16) bits in the constants
  /// buffer; returns their VA.
  uint64_t add_half_constant(std::span<const std::byte> data, DType from, uint8_t dtype);
  /// Dims of a value (static), or an error naming it.
  Expected<std::vector<int64_t>> dims(ValueId v) const;
  /// An internal error unless `perm` is a permutation of v's dims: every storage of v holds
  /// them in some order, checked where a storage is made (define, alias, storage_in_perm;
  /// constants are stored in identity order), so the views of it need not.
  Expected<void> check_order(ValueId v, const Perm& perm, std::span<const int64_t> dims) const;
  /// Bytes of v with `dims` stored as NPU_DTYPE_* `dtype` (0: v's graph type).
  uint64_t stored_bytes(ValueId v, std::span<const int64_t> dims, uint8_t dtype) const;
  /// A graph constant stored plainly (ONNX order) in the constants buffer, converted to
  /// `dtype` if given (integers to float, say).
  Expected<Storage> constant_storage(ValueId v, std::optional<DType> as = std::nullopt);
  /// Allocates arena storage for v in `perm` (one ref held by v), in stored_dtype(v).
  Expected<Storage> define(ValueId v, Perm perm);
  /// define() and the codegen view of the new storage.
  Expected<codegen::TensorDesc> define_desc(ValueId v, Perm perm);
  /// define() in identity order for a value the runtime writes (a graph input or a host
  /// result that the device reads).
  Expected<Storage> define_runtime_written(ValueId v);
  /// v shares `src`'s bytes (reshapes, transposes by permutation); when v keeps its graph
  /// type and src is stored narrower, v gets its own storage and a converting COPY layer.
  Expected<void> alias(ValueId v, const Storage& src, Perm perm);
  /// Storage of v (constants are placed on first use).
  Expected<Storage> get(ValueId v);
  /// v is dead: its arena bytes may be reused (its storage keeps the location for the
  /// package) and its relayout copies are freed.
  void release(ValueId v);

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

  /// Copies of a value in another storage order (TRANSPOSE layers), reused by later readers
  /// and freed with the value.
  std::map<std::pair<ValueId, Perm>, Storage> relayouts;

  // ---- device segment being emitted (set by lower_device_segment, device_segment.cpp) ----
  isa::CommandBufferBuilder* builder = nullptr;
  codegen::SemAllocator* sems = nullptr;
  std::vector<codegen::LayerReport> layers;
  /// Emits one layer (a FENCE first unless it is the segment's first layer). The FENCE is a
  /// safe point (ISA 1.2, npu/isa/safe_points.h): every layer loads what it reads from DRAM
  /// into SRAM from offset 0 and leaves its semaphores at 0, so nothing live stays in SRAM
  /// between two layers and a device may preempt the job there.
  template <typename Op>
  Expected<void> layer(const Op& op,
                       Expected<codegen::LayerReport> (*emit)(const Op&, codegen::EmitContext&)) {
    if (!layers.empty()) builder->safe_point();
    codegen::EmitContext ctx{*builder, opt.cfg, *sems, 0, 0, true};
    auto r = emit(op, ctx);
    if (!r) return r.error();
    layers.push_back(std::move(*r));
    return ok();
  }

  /// Lowers one device node: picks its op family's entry (lower_ops.h) and runs it.
  Expected<void> lower_node(const Node& n);
};

/// NPU_DTYPE_* of an IR dtype, or an error.
Expected<uint8_t> npu_dtype(std::optional<DType> t, const std::string& what);

}  // namespace npu::compiler::detail
