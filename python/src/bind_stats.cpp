// npu.RunStats: cycles, host time, engine utilization, predicted vs measured cycles per layer
// and the hazards of one Session.run().
#include <pybind11/stl.h>

#include "bindings.h"
#include "errors.h"
#include "npu/runtime/layer_timing.h"
#include "stats.h"

namespace npu::python {

namespace {

py::list layers(const StatsSnapshot& s) {
  py::list rows;
  for (const LayerTiming& t : layer_timings(s.package->metadata, *s.stats)) {
    py::dict row;
    row["layer"] = t.estimate.name;
    row["segment"] = t.segment;
    row["op"] = t.estimate.op;
    row["engine"] = t.estimate.engine;
    row["tiles"] = t.estimate.tiles;
    row["macs"] = t.estimate.macs;
    row["bytes"] = t.estimate.bytes;
    row["estimated_cycles"] = t.estimate.cycles;
    row["measured_cycles"] = t.measured_cycles;
    row["start_cycle"] = t.start_cycle;
    rows.append(row);
  }
  return rows;
}

py::list segments(const StatsSnapshot& s) {
  py::list rows;
  for (const SegmentStats& seg : s.stats->segments) {
    py::dict row;
    row["name"] = seg.name;
    row["kind"] = format::segment_kind_name(seg.kind);
    row["op"] = seg.kind == format::SegmentKind::kHost ? py::object(py::str(seg.op_type))
                                                       : py::object(py::none());
    row["cycles"] = seg.cycles;
    row["host_ms"] = static_cast<double>(seg.host_ns) / 1e6;
    rows.append(row);
  }
  return rows;
}

}  // namespace

void bind_stats(py::module_& m) {
  py::class_<StatsSnapshot>(
      m, "RunStats",
      "What one Session.run() did (Session.last_stats): modeled device cycles, host time, "
      "per-engine utilization, the compiler's estimate next to the measured cycles per layer, "
      "per-segment times and, with racecheck, the hazards. Per-engine and per-layer figures "
      "need job profiles (Session(..., profile=True), the default); without them they are "
      "empty.")
      .def_property_readonly(
          "cycles", [](const StatsSnapshot& s) { return s.stats->device_cycles; },
          "Modeled device cycles of the run (the sum over its device segments).")
      .def_property_readonly(
          "host_ms",
          [](const StatsSnapshot& s) { return static_cast<double>(s.stats->wall_ns) / 1e6; },
          "Host wall time of the run in milliseconds (inputs written to outputs read back).")
      .def_property_readonly(
          "device_ms",
          [](const StatsSnapshot& s) {
            return s.clock_hz ? static_cast<double>(s.stats->device_cycles) * 1e3 /
                                    static_cast<double>(s.clock_hz)
                              : 0.0;
          },
          "The modeled device time in milliseconds at the device's clock.")
      .def_property_readonly(
          "clock_hz", [](const StatsSnapshot& s) { return s.clock_hz; },
          "The device's modeled clock.")
      .def_property_readonly(
          "engines",
          [](const StatsSnapshot& s) {
            if (!s.stats->has_profile) return py::dict();
            return utilization(s.stats->busy_cycles, s.stats->device_cycles, s.engines);
          },
          "{engine name: utilization}, busy cycles / run cycles in 0..1 ('cp', 'dma_in', "
          "'dma_out', 'matrix', 'vector'); empty without profiles.")
      .def_property_readonly(
          "busy_cycles",
          [](const StatsSnapshot& s) {
            if (!s.stats->has_profile) return py::dict();
            return busy_cycles(s.stats->busy_cycles, s.engines);
          },
          "{engine name: busy cycles}; empty without profiles.")
      .def_property_readonly(
          "counters",
          [](const StatsSnapshot& s) {
            py::dict d;
            if (!s.stats->has_profile) return d;
            const JobProfile p = s.stats->merged_profile();
            d["dma_bytes_in"] = p.dma_bytes_in;
            d["dma_bytes_out"] = p.dma_bytes_out;
            d["macs"] = p.macs;
            d["vector_elements"] = p.vector_elements;
            d["semaphore_stall_cycles"] = p.semaphore_stall_cycles;
            d["commands_executed"] = p.timeline.size();
            return d;
          },
          "The device's work counters summed over the run: dma_bytes_in, dma_bytes_out, macs, "
          "vector_elements, semaphore_stall_cycles, commands_executed; empty without profiles.")
      .def_property_readonly("layers", &layers,
                             "Predicted vs measured per layer, one dict per layer of the device "
                             "segments: layer, segment, op, engine, tiles, macs, bytes, "
                             "estimated_cycles (the compiler's), measured_cycles (the device's, "
                             "between the FENCEs around the layer) and start_cycle (in its "
                             "segment). Empty without profiles.")
      .def_property_readonly("segments", &segments,
                             "One dict per executed segment: name, kind ('device' or 'host'), "
                             "op (host segments), cycles, host_ms.")
      .def_property_readonly(
          "hazards",
          [](const StatsSnapshot& s) {
            if (s.stats->hazard_count() == 0) return py::list();
            return hazard_list(s.stats->merged_hazards(),
                               s.stats->hazard_labels(s.package->metadata));
          },
          "With run(..., racecheck=True): the synchronization checker's hazards as dicts (kind, "
          "space, begin, end, first, second, text — the line npu-submit --racecheck prints), the "
          "commands named by segment and layer; [] when there were none.")
      .def("__repr__", [](const StatsSnapshot& s) {
        return "<npu.RunStats " + std::to_string(s.stats->device_cycles) + " cycles, host " +
               std::to_string(static_cast<double>(s.stats->wall_ns) / 1e6) + " ms>";
      });
}

}  // namespace npu::python
