// Segment runner: device segments submitted and waited for, host segments through the
// operator library (segment_runner.h).
#include "segment_runner.h"

#include "npu/command_buffer.h"
#include "npu/format/shape.h"
#include "npu/job_report.h"
#include "npu/ops/ops.h"
#include "npu/trace.h"
#include "tensor_io.h"

namespace npu::runtime {

using format::NpyArray;
using format::TensorInfo;

namespace {

std::string segment_label(const format::Segment& s, size_t index) {
  std::string name = s.name.empty() ? std::to_string(index) : s.name;
  if (s.kind == format::SegmentKind::kHost)
    return "segment '" + name + "' (host " + s.op_type + ")";
  return "segment '" + name + "'";
}

Access access_of(format::Access a) {
  return a == format::Access::kRead    ? Access::kRead
         : a == format::Access::kWrite ? Access::kWrite
                                       : Access::kReadWrite;
}

/// The segment's command buffer: built, its buffers used and finalized once (at load).
Expected<CommandBuffer*> command_buffer(ModelState& m, const format::Segment& s, size_t index,
                                        const std::string& label) {
  auto cached = m.cmdbufs.find(index);
  if (cached == m.cmdbufs.end()) {
    const auto& section = m.package.sections.at(s.command_buffer);
    CommandBuffer built = CommandBuffer::from_bytes(m.device, section.data);
    for (const auto& use : s.buffers) built.use(m.buffers.at(use.buffer), access_of(use.access));
    if (auto f = built.finalize(); !f)
      return make_error(f.error().code, m.where(label + ": " + f.error().message));
    cached = m.cmdbufs.emplace(index, std::move(built)).first;
  }
  return &cached->second;
}

/// The segment's commands for the run statistics, split once.
std::shared_ptr<const std::vector<npu_cmd>> segment_commands(ModelState& m,
                                                             const format::Segment& s,
                                                             size_t index) {
  auto& commands = m.commands[index];
  if (!commands)
    commands = std::make_shared<const std::vector<npu_cmd>>(
        split_commands(m.package.sections.at(s.command_buffer).data));
  return commands;
}

Expected<void> run_device(RunState& run, const format::Segment& s, size_t index,
                          const RunOptions& o, SegmentStats& st) {
  ModelState& m = run.m;
  const std::string label = segment_label(s, index);
  auto cb = command_buffer(m, s, index, label);
  if (!cb) return cb.error();
  st.command_list = segment_commands(m, s, index);
  if (!m.context) {
    auto ctx = Context::create(m.device, m.priority);
    if (!ctx) return make_error(ctx.error().code, m.where(label + ": " + ctx.error().message));
    m.context.emplace(std::move(*ctx));
  }
  auto job = m.context->submit(**cb, {.racecheck = o.racecheck});
  if (!job) return make_error(job.error().code, m.where(label + ": " + job.error().message));
  auto res = o.deadline ? job->wait_until(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              o.deadline->time_since_epoch())
                                              .count())
                        : job->wait(o.timeout);
  if (!res) {
    m.context.reset();
    return make_error(res.error().code, m.where(label + ": wait: " + res.error().message));
  }
  st.cycles = res->cycles;
  if (o.racecheck) {
    auto h = job->hazards();
    if (!h) return make_error(h.error().code, m.where(label + ": " + h.error().message));
    st.hazards = std::move(*h);
  }
  if (!res->ok()) {
    m.context.reset();  // banned
    std::string what = std::string("job ") + to_string(res->status);
    if (res->fault.kind != DRM_NPU_FAULT_NONE)
      what += ": " + describe_fault(res->fault, st.commands());
    return make_error(EIO, m.where(label + ": " + what));
  }
  if (o.collect_profile && m.device.params().has(DRM_NPU_CAP_JOB_PROFILE)) {
    auto p = job->profile();
    if (p) st.profile = std::move(*p);
  }
  // The device wrote its outputs: drop stale host copies.
  for (const auto& out : s.outputs) run.values.erase(out);
  return ok();
}

/// Checks a host op's output against the package's tensor (binding the symbolic dims it
/// fixes) and writes it to its location when it has one.
Expected<void> store_host_output(RunState& run, const std::string& label, const TensorInfo& t,
                                 const NpyArray& a) {
  if (a.dtype != t.dtype) {
    return make_error(
        EINVAL, run.m.where(label + ": output '" + t.name + "' is " + format::dtype_name(a.dtype) +
                            ", the package says " + format::dtype_name(t.dtype)));
  }
  bool shape_ok = a.shape.size() == t.shape.size();
  for (size_t d = 0; shape_ok && d < a.shape.size(); ++d) {
    const auto& dim = t.shape[d];
    if (!dim.symbolic()) {
      shape_ok = dim.size == a.shape[d];
    } else if (auto [it, fresh] = run.bindings.emplace(dim.symbol, a.shape[d]); !fresh) {
      shape_ok = it->second == a.shape[d];
    }
  }
  if (!shape_ok) {
    return make_error(EINVAL, run.m.where(label + ": output '" + t.name + "' has shape " +
                                          format::shape_text(a.shape) + ", the package says " +
                                          format::shape_text(t.shape)));
  }
  if (t.location) NPU_TRY(write_tensor(run, t, a));
  return ok();
}

Expected<void> run_host(RunState& run, const format::Segment& s, size_t index,
                        const RunOptions& o) {
  const std::string label = segment_label(s, index);
  std::vector<const NpyArray*> ins;
  for (const auto& name : s.inputs) {
    if (name.empty()) {  // omitted optional input
      ins.push_back(nullptr);
      continue;
    }
    auto v = value(run, name);
    if (!v) return v.error();
    ins.push_back(*v);
  }
  auto outs = ops::run(s.op_type, s.attributes, ins, s.outputs.size(), {.deadline = o.deadline});
  if (!outs) return make_error(outs.error().code, run.m.where(label + ": " + outs.error().message));
  for (size_t i = 0; i < s.outputs.size(); ++i) {
    if (s.outputs[i].empty()) continue;  // an omitted optional output: dropped
    NpyArray& a = (*outs)[i];
    if (const TensorInfo* t = run.m.package.metadata.find_tensor(s.outputs[i]))
      NPU_TRY(store_host_output(run, label, *t, a));
    run.values[s.outputs[i]] = std::move(a);
  }
  return ok();
}

}  // namespace

Expected<void> prepare_device_segments(ModelState& m) {
  const auto& segs = m.package.metadata.segments;
  for (size_t i = 0; i < segs.size(); ++i) {
    if (segs[i].kind != format::SegmentKind::kDevice) continue;
    auto cb = command_buffer(m, segs[i], i, segment_label(segs[i], i));
    if (!cb) return cb.error();
    segment_commands(m, segs[i], i);
  }
  return ok();
}

Expected<void> run_segments(RunState& run, const RunOptions& options) {
  RunStats& stats = run.m.stats;
  const auto& segs = run.m.package.metadata.segments;
  bool all_profiles = true;
  for (size_t i = 0; i < segs.size(); ++i) {
    const auto& s = segs[i];
    SegmentStats st;
    st.name = s.name.empty() ? std::to_string(i) : s.name;
    st.kind = s.kind;
    st.op_type = s.op_type;
    st.index = static_cast<uint32_t>(i);
    const int64_t s0 = monotonic_ns();
    Expected<void> r = ok();
    if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) {
      r = make_error(ETIMEDOUT,
                     run.m.where(segment_label(s, i) + ": not started: the time limit passed"));
    } else if (s.kind == format::SegmentKind::kDevice) {
      r = run_device(run, s, i, options, st);
    } else {
      r = run_host(run, s, i, options);
    }
    st.host_ns = static_cast<uint64_t>(monotonic_ns() - s0);
    if (s.kind == format::SegmentKind::kDevice) {
      stats.device_cycles += st.cycles;
      if (st.profile) {
        for (size_t e = 0; e < stats.busy_cycles.size(); ++e) {
          stats.busy_cycles[e] += st.profile->busy_cycles[e];
        }
      } else {
        all_profiles = false;
      }
    }
    stats.segments.push_back(std::move(st));
    if (!r) return r.error();
  }
  stats.has_profile = all_profiles;
  return ok();
}

}  // namespace npu::runtime
