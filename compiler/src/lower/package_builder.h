// Private: the model package (npu/format/package.h) under construction. The tensor table
// lists every tensor the package names, in first-use order (touch); segments and sections
// are appended as the segment builders (segments.h) produce them; at the end the tensors that
// live on the device get their locations in the constants buffer or the activation arena,
// graph outputs folded to constants get a host Identity, and the buffers and model metadata
// are filled in (finish). One per lower() call, single-threaded; the graph must outlive it.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lower/lower.h"
#include "npu/compiler/graph.h"
#include "npu/format/package.h"

namespace npu::compiler::detail {

class Lowering;

struct PackageBuilder {
  explicit PackageBuilder(const Graph& graph) : g(graph) {}

  const Graph& g;
  format::PackageMetadata md;
  std::vector<format::Section> sections;
  std::map<std::string, size_t> tensor_index;  // name -> index in md.tensors

  /// The TensorInfo of a value (created on first use; its location is filled at the end).
  void touch(ValueId v);
  /// A host-only tensor that is not a graph value (an un-fused activation's input).
  void touch_extra(const std::string& name, const Value& like);
  bool has_tensor(const std::string& name) const { return tensor_index.count(name) != 0; }
  /// A constant tensor that is not a graph value (a Clip bound of a host step), at `loc`.
  void add_constant_tensor(const std::string& name, format::TensorLocation loc);

  /// A graph output folded to a constant (Shape of a static shape, a Constant): a host
  /// Identity produces it from a constant tensor.
  [[nodiscard]] std::optional<LowerError> add_constant_outputs(Lowering& L);
  /// Locations of every tensor the package names that lives on the device.
  void locate_tensors(Lowering& L);
  /// The model's input and output names (graph order).
  void list_graph_io();
  /// The package: these tensors, segments and sections, the constants section and buffer,
  /// the arena buffer and the model/target metadata.
  format::Package finish(Lowering& L) &&;

 private:
  int unknown_dims_ = 0;  // numbers the unnamed dynamic dims "?0", "?1", ...
  std::vector<format::Dim> shape_of(const Value& v);
};

}  // namespace npu::compiler::detail
