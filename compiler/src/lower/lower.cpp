// The lowering's entry (see lower.h): the memory plan and liveness, graph inputs the device
// reads placed in the arena, then each segment in partition order, then the package.
#include "lower/lower.h"

#include "lower/liveness.h"
#include "lower/lowering.h"
#include "lower/package_builder.h"
#include "lower/segments.h"

namespace npu::compiler::detail {

namespace {

/// Lists the graph inputs in the tensor table; those a device node reads get arena storage
/// (the runtime writes them there).
std::optional<LowerError> place_graph_inputs(Lowering& L, PackageBuilder& pb,
                                             const Liveness& live) {
  for (ValueId v : L.g.inputs) {
    pb.touch(v);
    if (!live.read_by_device(v)) continue;
    if (auto s = L.define_runtime_written(v); !s) return LowerError{s.error(), -1};
  }
  return std::nullopt;
}

/// Values that cross a segment boundary or are graph inputs/outputs keep their graph type:
/// the runtime (or a later segment through the tensor table) reads them as declared.
void mark_typed_values(Lowering& L, const Partition& p) {
  for (const Segment& s : p.segments) {
    for (ValueId v : s.inputs) L.keeps_type[static_cast<size_t>(v)] = true;
    for (ValueId v : s.outputs) L.keeps_type[static_cast<size_t>(v)] = true;
  }
  for (ValueId v : L.g.inputs) L.keeps_type[static_cast<size_t>(v)] = true;
  for (ValueId v : L.g.outputs) L.keeps_type[static_cast<size_t>(v)] = true;
}

}  // namespace

std::variant<format::Package, LowerError> lower(const Graph& g, const Partition& p,
                                                const LowerOptions& o) {
  Lowering L(g, o);
  // The constants buffer holds about the graph's constants (relaid out, sometimes narrowed):
  // reserve that much plus alignment, so it is not regrown (and recopied) as it fills.
  size_t constant_bytes = 0;
  for (size_t id = 0; id < g.num_values(); ++id)
    if (const NpyArray* c = g.constant(static_cast<ValueId>(id)))
      constant_bytes += c->data.size() + 64;
  L.constants.reserve(constant_bytes + (size_t{1} << 20));
  PackageBuilder pb(g);
  const Liveness live(g, p);
  mark_typed_values(L, p);
  if (auto e = place_graph_inputs(L, pb, live)) return *e;
  for (const Segment& seg : p.segments) {
    auto e = seg.target == Target::kDevice ? lower_device_segment(L, pb, live, seg)
                                           : lower_host_segment(L, pb, live, seg);
    if (e) return *e;
  }
  if (auto e = pb.add_constant_outputs(L)) return *e;
  pb.locate_tensors(L);
  pb.list_graph_io();
  return std::move(pb).finish(L);
}

}  // namespace npu::compiler::detail
