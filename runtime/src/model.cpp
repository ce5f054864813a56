// Model: the facade over the runtime's parts — load (package_loader), one run of the graph
// (tensor_io binds the inputs, segment_runner runs the segments, tensor_io reads the
// outputs back), traces of the last run. Model::run() itself is in batching.cpp.
#include "npu/runtime/model.h"

#include <exception>

#include "model_state.h"
#include "npu/exception_boundary.h"
#include "npu/runtime/run_trace.h"
#include "package_loader.h"
#include "segment_runner.h"
#include "tensor_io.h"

namespace npu {

namespace runtime {

Expected<Arrays> run_once(ModelState& m, const Views& inputs, const RunOptions& options) {
  const int64_t t0 = monotonic_ns();
  m.stats = {};
  RunState run{m, {}, {}, nullptr};
  try {
    NPU_TRY(bind_inputs(run, inputs));
    auto r = run_segments(run, options);
    m.stats.wall_ns = static_cast<uint64_t>(monotonic_ns() - t0);
    if (!r) return r.error();
    Arrays out;
    for (const auto& d : m.outputs) {
      auto v = value(run, d.name);  // reads the output back when only the device has it
      if (!v) return v.error();
      out[d.name] = std::move(run.values.at(d.name));
    }
    m.stats.wall_ns = static_cast<uint64_t>(monotonic_ns() - t0);
    return out;
  } catch (...) {
    return error_from_exception(m.where("run"), std::current_exception());
  }
}

}  // namespace runtime

Model::Model(std::unique_ptr<runtime::ModelState> state) : state_(std::move(state)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

Expected<Model> Model::load(const Device& device, const std::string& path) {
  return catch_exceptions(path + ": load", [&]() -> Expected<Model> {
    auto pkg = format::read_package(path);  // the device-aware checks run once, in load()
    if (!pkg) return pkg.error();
    return load(device, std::move(*pkg), path);
  });
}

Expected<Model> Model::load(const Device& device, format::Package package, std::string name) {
  const std::string where = name + ": load";
  return catch_exceptions(where, [&]() -> Expected<Model> {
    auto state = runtime::load_package(device, std::move(package), std::move(name));
    if (!state) return state.error();
    return Model(std::move(*state));
  });
}

const std::vector<TensorDesc>& Model::inputs() const {
  return state_->inputs;
}
const std::vector<TensorDesc>& Model::outputs() const {
  return state_->outputs;
}
const format::Package& Model::package() const {
  return state_->package;
}
const std::string& Model::name() const {
  return state_->name;
}
const RunStats& Model::last_stats() const {
  return state_->stats;
}

Expected<void> Model::set_priority(Priority p) {
  auto ctx = Context::create(state_->device, p);
  if (!ctx) return make_error(ctx.error().code, state_->where(ctx.error().message));
  state_->context.emplace(std::move(*ctx));
  state_->priority = p;
  return ok();
}

Priority Model::priority() const {
  return state_->priority;
}

std::string Model::trace_json(TraceOptions options) const {
  if (options.process_name.empty()) options.process_name = state_->name;
  return run_trace_json(state_->stats, state_->package.metadata, std::move(options));
}

Expected<void> Model::write_trace(const std::string& path, TraceOptions options) const {
  if (options.process_name.empty()) options.process_name = state_->name;
  return write_run_trace(state_->stats, state_->package.metadata, path, std::move(options));
}

}  // namespace npu
