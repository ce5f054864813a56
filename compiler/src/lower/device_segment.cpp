// Device segments: each node's layers into one command buffer, its cycle estimate (the
// emulator's timing model replayed on the commands) and the per-layer reports (see segments.h).
#include <string>

#include "lower/segments.h"
#include "npu/isa/schedule.h"
#include "npu/isa/validate.h"

namespace npu::compiler::detail {

namespace {

format::LayerReport layer_report(const codegen::LayerReport& l) {
  format::LayerReport r;
  r.name = l.name;
  r.op = l.op;
  r.engine = isa::engine_name(l.engine);
  r.tiles = l.tiles;
  r.macs = l.macs;
  r.bytes = l.bytes_in + l.bytes_out;
  r.cycles = l.cycles;
  r.compute_cycles = l.compute_cycles;
  return r;
}

/// Number of device segments already in the package (names them npu0, npu1, ...).
size_t device_segment_count(const PackageBuilder& pb) {
  size_t k = 0;
  for (const format::Segment& s : pb.md.segments) k += s.kind == format::SegmentKind::kDevice;
  return k;
}

}  // namespace

std::optional<LowerError> lower_device_segment(Lowering& L, PackageBuilder& pb,
                                               const Liveness& live, const Segment& seg) {
  const Graph& g = L.g;
  isa::CommandBufferBuilder builder;
  codegen::SemAllocator sems(L.opt.cfg.num_semaphores);
  L.builder = &builder;
  L.sems = &sems;
  L.layers.clear();
  for (size_t ni : seg.nodes) {
    const Node& n = g.nodes[ni];
    if (auto r = L.lower_node(n); !r) {
      return LowerError{make_error(r.error().code, n.label() + ": " + r.error().message),
                        static_cast<int>(ni)};
    }
    live.release_dead(L, ni);
    if (builder.size() >= NPU_MAX_CMDS) {  // END still to come
      return LowerError{make_error(EFBIG, n.label() + ": its device segment needs " +
                                              std::to_string(builder.size() + 1) +
                                              " commands, more than a command buffer may hold (" +
                                              std::to_string(NPU_MAX_CMDS) + ")"),
                        static_cast<int>(ni)};
    }
  }
  L.builder = nullptr;
  L.sems = nullptr;
  const uint64_t features = isa::program_features(builder.commands());
  auto sched = isa::replay(builder.commands(), L.opt.cfg);
  if (!sched) return LowerError{sched.error(), -1};
  format::Segment s;
  s.kind = format::SegmentKind::kDevice;
  s.name = "npu" + std::to_string(device_segment_count(pb));
  s.command_buffer = static_cast<uint32_t>(pb.sections.size());
  pb.sections.push_back({format::SectionKind::kCommandBuffer, s.name, builder.finish(features)});
  pb.md.target.features |= features;
  s.buffers = {{"constants", format::Access::kRead}, {"activations", format::Access::kReadWrite}};
  for (ValueId v : seg.inputs) {
    pb.touch(v);
    s.inputs.push_back(g.value(v).name);
  }
  for (ValueId v : seg.outputs) {
    pb.touch(v);
    s.outputs.push_back(g.value(v).name);
  }
  for (const auto& l : L.layers) s.layers.push_back(layer_report(l));
  s.estimated_cycles = sched->cycles;
  pb.md.segments.push_back(std::move(s));
  return std::nullopt;
}

}  // namespace npu::compiler::detail
