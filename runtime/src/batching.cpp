// Per-batch slicing (batching.h), Model::run() and run_batched() (npu/runtime/batch.h).
#include "batching.h"

#include <algorithm>

#include "npu/exception_boundary.h"
#include "npu/format/shape.h"
#include "npu/runtime/batch.h"
#include "tensor_io.h"

namespace npu::runtime {

using format::NpyArray;

namespace {

/// Rows [first, first + count) of a along dim 0 (a view of a's bytes).
format::ArrayView slice_rows(const format::ArrayView& a, int64_t first, int64_t count) {
  format::ArrayView out = a;
  out.shape[0] = count;
  const size_t row = a.data.size() / static_cast<size_t>(a.shape[0]);
  out.data = a.data.subspan(row * static_cast<size_t>(first), row * static_cast<size_t>(count));
  return out;
}

bool has_dynamic_batch(const TensorDesc& d) {
  return !d.shape.empty() && d.shape[0].symbolic();
}

/// Appends a slice's outputs to `outputs` along dim 0.
Expected<void> append_slice(const ModelState& m, const SlicePlan& plan, Arrays& outputs,
                            Arrays&& slice) {
  for (auto& entry : slice) {
    // Named, not a structured binding: lambdas may not capture those before Clang 16.
    const std::string& name = entry.first;
    auto& a = entry.second;
    const bool batched = std::any_of(m.outputs.begin(), m.outputs.end(), [&](const TensorDesc& d) {
      return d.name == name && has_dynamic_batch(d);
    });
    if (plan.dynamic_outputs && !batched) {
      return make_error(EINVAL,
                        m.where("output '" + name + "' has no dynamic batch dim: run a batch of " +
                                std::to_string(plan.per_slice) + " at a time"));
    }
    auto [it, fresh] = outputs.try_emplace(name, std::move(a));
    if (fresh) continue;
    if (a.shape.empty() || it->second.shape.size() != a.shape.size()) {
      return make_error(EINVAL, m.where("output '" + name +
                                        "' has no batch dim to concatenate per-batch results"));
    }
    it->second.shape[0] += a.shape[0];
    it->second.data.insert(it->second.data.end(), a.data.begin(), a.data.end());
  }
  return ok();
}

/// Adds one slice's stats to the total (segments moved).
void add_stats(RunStats& total, RunStats& slice, bool first) {
  total.device_cycles += slice.device_cycles;
  for (size_t e = 0; e < total.busy_cycles.size(); ++e)
    total.busy_cycles[e] += slice.busy_cycles[e];
  total.has_profile = first ? slice.has_profile : total.has_profile && slice.has_profile;
  for (auto& seg : slice.segments) total.segments.push_back(std::move(seg));
}

}  // namespace

SlicePlan dynamic_batch_plan(const ModelState& m, const Views& inputs) {
  SlicePlan plan;
  // The batch the device code was compiled for, read from the first input whose leading dim
  // is symbolic and which lives in a device buffer.
  for (const auto& d : m.inputs) {
    if (!has_dynamic_batch(d)) continue;
    const format::TensorInfo* t = m.package.metadata.find_tensor(d.name);
    auto it = inputs.find(d.name);
    if (!t || !t->location || !dense_plain(*t) || it == inputs.end() || it->second.shape.empty())
      continue;
    const int64_t compiled = compiled_dim(*t, d.shape, 0);
    if (compiled == 0) continue;
    plan.given = it->second.shape[0];
    plan.per_slice = compiled;
    break;
  }
  const int64_t given = plan.given, compiled = plan.per_slice;
  if (compiled <= 0 || given == compiled || given % compiled != 0 || given == 0) return {};
  for (const auto& entry : inputs) {
    const std::string& name = entry.first;
    const format::ArrayView& a = entry.second;
    const bool batched = std::any_of(m.inputs.begin(), m.inputs.end(), [&](const TensorDesc& d) {
      return d.name == name && has_dynamic_batch(d) && !a.shape.empty() && a.shape[0] == given;
    });
    if (batched) plan.batched.insert(name);
  }
  return plan;
}

RunOptions with_deadline(const RunOptions& options) {
  RunOptions o = options;
  if (o.timeout != Job::kForever) {  // one deadline for every slice and segment
    const auto until = std::chrono::steady_clock::now() + o.timeout;
    if (!o.deadline || until < *o.deadline) o.deadline = until;
  }
  return o;
}

Expected<Arrays> run_in_slices(ModelState& m, const Views& inputs, const SlicePlan& plan,
                               const RunOptions& options) {
  const int64_t t0 = monotonic_ns();
  Arrays outputs;
  RunStats total;
  for (int64_t first = 0; first < plan.given; first += plan.per_slice) {
    Views slice;
    for (const auto& [name, a] : inputs)
      slice[name] = plan.batched.count(name) ? slice_rows(a, first, plan.per_slice) : a;
    auto r = run_once(m, slice, options);
    if (!r) {
      add_stats(total, m.stats, first == 0);
      total.wall_ns = static_cast<uint64_t>(monotonic_ns() - t0);
      m.stats = std::move(total);  // the stats up to the failure
      return make_error(r.error().code, r.error().message + " (batch rows " +
                                            std::to_string(first) + ".." +
                                            std::to_string(first + plan.per_slice - 1) + ")");
    }
    NPU_TRY(append_slice(m, plan, outputs, std::move(*r)));
    add_stats(total, m.stats, first == 0);
  }
  total.wall_ns = static_cast<uint64_t>(monotonic_ns() - t0);
  m.stats = std::move(total);
  return outputs;
}

Expected<Arrays> run_model(ModelState& m, const Views& inputs, const RunOptions& options) {
  const RunOptions o = with_deadline(options);
  // A dynamic batch larger than the compiled one runs slice by slice (per-batch execution).
  return catch_exceptions(m.where("run"), [&] {
    const SlicePlan plan = dynamic_batch_plan(m, inputs);
    if (plan.per_slice == 0) return run_once(m, inputs, o);
    return run_in_slices(m, inputs, plan, o);
  });
}

}  // namespace npu::runtime

namespace npu {

using runtime::Arrays;
using runtime::Views;

Expected<Arrays> Model::run(const Arrays& inputs, const RunOptions& options) {
  return catch_exceptions(state_->where("run"), [&] {
    const Views views(inputs.begin(), inputs.end());
    return runtime::run_model(*state_, views, options);
  });
}

Expected<Arrays> Model::run_views(const Views& inputs, const RunOptions& options) {
  return runtime::run_model(*state_, inputs, options);
}

namespace {

/// float64 data for a float32 input, converted (NumPy's default dtype); else `data` as is.
format::NpyArray converted(const format::NpyArray& data, format::DType want) {
  if (data.dtype != format::DType::kFloat64 || want != format::DType::kFloat32) return data;
  format::NpyArray f = format::NpyArray::zeros(format::DType::kFloat32, data.shape);
  auto src = data.view<double>();
  auto dst = f.view<float>();
  for (size_t i = 0; i < src.size(); ++i) dst[i] = static_cast<float>(src[i]);
  return f;
}

Expected<Arrays> run_batched_unguarded(Model& model, const std::string& input,
                                       const format::NpyArray& data, const RunOptions& given) {
  const RunOptions options = runtime::with_deadline(given);
  runtime::ModelState& m = runtime::ModelAccess::state(model);
  const auto in = std::find_if(m.inputs.begin(), m.inputs.end(),
                               [&](const TensorDesc& d) { return d.name == input; });
  if (in == m.inputs.end()) return model.run({{input, data}}, options);  // names the inputs
  format::NpyArray x = converted(data, in->dtype);
  if (x.dtype != in->dtype) {
    return make_error(
        EINVAL, m.where("dtype " + std::string(format::dtype_name(x.dtype)) + ", but input '" +
                        in->name + "' is " + format::dtype_name(in->dtype)));
  }
  if (!in->shape.empty() && in->shape[0].symbolic()) return model.run({{input, x}}, options);
  std::vector<int64_t> dims;
  for (const auto& d : in->shape) dims.push_back(d.symbolic() ? -1 : d.size);
  const bool fits = !dims.empty() && x.shape.size() == dims.size() && dims[0] > 0 &&
                    x.shape[0] > 0 && std::equal(dims.begin() + 1, dims.end(), x.shape.begin() + 1);
  if (!fits) {
    return make_error(
        EINVAL, m.where("shape " + format::shape_text(x.shape) + " does not match input '" +
                        in->name + "' " + format::shape_text(dims) + " (any batch of its rows)"));
  }
  if (x.shape[0] == dims[0]) return model.run({{input, x}}, options);
  // A batch that is not a multiple of the compiled one: the last slice is completed with the
  // batch's own first rows (values already seen, so calibration ranges do not change), and
  // their results are dropped from every output.
  const int64_t rows = x.shape[0];
  const int64_t padded = (rows + dims[0] - 1) / dims[0] * dims[0];
  if (padded != rows) {
    const size_t row_bytes = x.data.size() / static_cast<size_t>(rows);
    for (int64_t r = rows; r < padded; ++r) {
      const auto from =
          x.data.begin() + static_cast<ptrdiff_t>(row_bytes * static_cast<size_t>(r % rows));
      x.data.insert(x.data.end(), from, from + static_cast<ptrdiff_t>(row_bytes));
    }
    x.shape[0] = padded;
  }
  const runtime::SlicePlan plan{{input}, padded, dims[0], /*dynamic_outputs=*/false};
  auto outputs = runtime::run_in_slices(m, {{input, x}}, plan, options);
  if (!outputs || padded == rows) return outputs;
  for (auto& [name, a] : *outputs) {
    if (a.shape.empty() || a.shape[0] % padded != 0) {
      return make_error(EINVAL, m.where("output '" + name + "' " + format::shape_text(a.shape) +
                                        " has no batch dim to drop the padding rows from; give a "
                                        "multiple of " +
                                        std::to_string(dims[0]) + " rows"));
    }
    const int64_t keep = a.shape[0] / padded * rows;
    a.data.resize(a.data.size() / static_cast<size_t>(a.shape[0]) * static_cast<size_t>(keep));
    a.shape[0] = keep;
  }
  return outputs;
}

}  // namespace

Expected<Arrays> run_batched(Model& model, const std::string& input, const format::NpyArray& data,
                             const RunOptions& options) {
  return catch_exceptions(runtime::ModelAccess::state(model).where("run_batched"),
                          [&] { return run_batched_unguarded(model, input, data, options); });
}

}  // namespace npu
