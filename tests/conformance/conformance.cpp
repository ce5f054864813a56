// One ONNX backend test through the whole stack: the reference inputs and outputs are read with
// compiler::read_tensor_pb, the model is imported once to learn which inputs only
// parameterize an operator (compiler::parameter_inputs: weights, shapes, scales), then compiled
// with those bound as constants — as npu-run does — and run on the device with the others.
#include "conformance.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "npu/compiler/compile.h"
#include "npu/compiler/onnx_import.h"
#include "npu/compiler/onnx_tensor.h"
#include "npu/format/shape.h"
#include "npu/isa/safe_points.h"
#include "npu/runtime/model.h"

namespace npu::conformance {
namespace {

namespace fs = std::filesystem;
using format::DType;
using format::NpyArray;

// The multi-index of flat element `i` of `shape`, as "[1, 2]".
std::string index_string(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      idx[d] = i % shape[d];
      i /= shape[d];
    }
  }
  return format::shape_text(idx);
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

struct Mismatches {
  int64_t count = 0;
  int64_t first = -1;
  double got = 0, want = 0;
  double max_abs = 0;
};

template <typename T>
Mismatches compare_floats(std::span<const T> got, std::span<const T> want, const Tolerance& tol) {
  Mismatches m;
  for (size_t i = 0; i < want.size(); ++i) {
    const double a = got[i], b = want[i];
    bool ok = a == b || (std::isnan(a) && std::isnan(b));
    if (!ok && std::isfinite(a) && std::isfinite(b)) {
      const double diff = std::fabs(a - b);
      ok = diff <= tol.atol + tol.rtol * std::fabs(b);
      if (!ok) m.max_abs = std::max(m.max_abs, diff);
    }
    if (ok) continue;
    if (m.count++ == 0) {
      m.first = static_cast<int64_t>(i);
      m.got = a;
      m.want = b;
    }
  }
  return m;
}

template <typename T>
Mismatches compare_exact(std::span<const T> got, std::span<const T> want) {
  Mismatches m;
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] == want[i]) continue;
    const double diff = std::fabs(static_cast<double>(got[i]) - static_cast<double>(want[i]));
    m.max_abs = std::max(m.max_abs, diff);
    if (m.count++ == 0) {
      m.first = static_cast<int64_t>(i);
      m.got = static_cast<double>(got[i]);
      m.want = static_cast<double>(want[i]);
    }
  }
  return m;
}

template <typename T>
Mismatches compare_as(const NpyArray& got, const NpyArray& want) {
  return compare_exact<T>(got.view<T>(), want.view<T>());
}

// Which inputs and outputs the test files map to: the graph inputs that are not initializers
// (input_N.pb is the N-th of them) and the graph outputs (output_N.pb).
struct ModelIo {
  std::vector<std::string> inputs, outputs;
  std::string foreign_op;  // the first node of a domain other than ai.onnx, as a skip reason
};

Expected<ModelIo> model_io(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return make_error(ENOENT, "model.onnx: cannot open");
  onnx::ModelProto m;
  if (!m.ParseFromIstream(&f)) {
    return make_error(EINVAL, "model.onnx: not an onnx model (protobuf parse failed)");
  }
  std::set<std::string> initializers;
  for (const auto& t : m.graph().initializer()) initializers.insert(t.name());
  ModelIo io;
  for (const auto& in : m.graph().input()) {
    if (!initializers.count(in.name())) io.inputs.push_back(in.name());
  }
  for (const auto& out : m.graph().output()) io.outputs.push_back(out.name());
  for (const auto& n : m.graph().node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      io.foreign_op = "node '" + n.name() + "' (" + n.op_type() + "): domain '" + n.domain() +
                      "' is not supported";
      break;
    }
  }
  return io;
}

// Drops the test directory from messages ("/usr/.../test_abs/model.onnx: x" -> "model.onnx: x").
std::string relative(std::string msg, const fs::path& dir) {
  const std::string prefix = dir.string() + "/";
  for (size_t at; (at = msg.find(prefix)) != std::string::npos;) msg.erase(at, prefix.size());
  return msg;
}

Outcome fail(std::string reason) {
  return {Status::kFail, std::move(reason)};
}
Outcome skip(std::string reason) {
  return {Status::kSkip, std::move(reason)};
}

// The run's outputs against the data set's output_N.pb.
Outcome compare_outputs(const std::map<std::string, NpyArray>& outputs, const Model& model,
                        const fs::path& set, const ModelIo& io, const TestOptions& options) {
  const auto& descs = model.outputs();
  if (descs.size() != io.outputs.size()) {
    return fail("the package has " + std::to_string(descs.size()) + " outputs, the model " +
                std::to_string(io.outputs.size()));
  }
  for (size_t i = 0; i < descs.size(); ++i) {
    const std::string& name = descs[i].name;
    if (name != io.outputs[i]) {
      return fail("output " + std::to_string(i) + " is '" + name + "', the model's is '" +
                  io.outputs[i] + "'");
    }
    const fs::path file = set / ("output_" + std::to_string(i) + ".pb");
    auto want = compiler::read_tensor_pb(file.string());
    if (!want) {
      const std::string why = relative(want.error().message, set.parent_path());
      return want.error().code == ENOTSUP ? skip(why) : fail(why);
    }
    auto got = outputs.find(name);
    if (got == outputs.end()) return fail("output '" + name + "' missing from the run");
    if (auto diff = compare(got->second, *want, options.tolerance); !diff.empty()) {
      return fail("output '" + name + "': " + diff);
    }
  }
  return {Status::kPass, {}};
}

// The same package on `device` (preempted at every safe point): "" when its outputs are the
// bytes of `first` and it was stopped at every safe point of its device segments (those not
// followed by END), else why not.
std::string run_preempted(const Model& model, const std::map<std::string, NpyArray>& inputs,
                          const std::map<std::string, NpyArray>& first, const Device& device,
                          RunOptions ro) {
  auto again = Model::load(device, format::Package(model.package()), "model.npub");
  if (!again) return "preempted: load: " + again.error().message;
  ro.collect_profile = true;
  auto outputs = again->run(inputs, ro);
  if (!outputs) return "preempted: run: " + outputs.error().message;
  for (const auto& [name, want] : first) {
    auto got = outputs->find(name);
    if (got == outputs->end()) return "preempted: output '" + name + "' missing";
    if (got->second.dtype != want.dtype || got->second.shape != want.shape ||
        got->second.data != want.data) {
      return "preempted: output '" + name + "' differs from the unpreempted run's bytes";
    }
  }
  uint64_t points = 0, preemptions = 0;
  for (const SegmentStats& seg : again->last_stats().segments) {
    if (seg.kind != format::SegmentKind::kDevice) continue;
    const auto cmds = seg.commands();
    for (const uint32_t p : isa::safe_points(cmds)) {
      points += p + 1 < cmds.size() && cmds[p + 1].hdr.opcode != NPU_OP_END;
    }
    if (seg.profile) preemptions += seg.profile->preemptions;
  }
  if (preemptions != points) {
    return "preempted: " + std::to_string(preemptions) + " preemptions at " +
           std::to_string(points) + " safe points";
  }
  return {};
}

// Loads and runs a compiled package on the data set's run-time inputs and compares the outputs
// with output_N.pb; with racecheck, counts the hazards of the run.
Outcome run_package(format::Package package, const std::map<std::string, NpyArray>& inputs,
                    const fs::path& set, const ModelIo& io, const Device& device,
                    const TestOptions& options) {
  auto model = Model::load(device, std::move(package), "model.npub");
  if (!model) return fail("load: " + model.error().message);
  RunOptions ro;
  ro.timeout = options.segment_timeout;
  ro.racecheck = options.racecheck;
  auto outputs = model->run(inputs, ro);
  if (!outputs) return fail("run: " + outputs.error().message);
  Outcome o = compare_outputs(*outputs, *model, set, io, options);
  if (o.status == Status::kPass && options.preempted != nullptr) {
    if (std::string why = run_preempted(*model, inputs, *outputs, *options.preempted, ro);
        !why.empty()) {
      return fail(why);
    }
  }
  const RunStats& stats = model->last_stats();
  o.hazards = stats.hazard_count();
  if (o.hazards > 0) {
    const HazardReport h = stats.merged_hazards();
    if (!h.hazards.empty()) {
      o.first_hazard =
          describe_hazard(h.hazards.front(), stats.hazard_labels(model->package().metadata));
    }
  }
  return o;
}

Outcome run_data_set(const fs::path& dir, const fs::path& set, const ModelIo& io,
                     const Device& device, const TestOptions& options) {
  const std::string model_path = (dir / "model.onnx").string();
  auto pb = [&](const char* kind, size_t i) {
    return set / (std::string(kind) + "_" + std::to_string(i) + ".pb");
  };
  size_t num_inputs = 0, num_outputs = 0;
  while (fs::exists(pb("input", num_inputs))) ++num_inputs;
  while (fs::exists(pb("output", num_outputs))) ++num_outputs;
  if (num_inputs != io.inputs.size()) {
    return fail(std::to_string(num_inputs) + " input files for " +
                std::to_string(io.inputs.size()) + " graph inputs");
  }
  if (num_outputs != io.outputs.size()) {
    return fail(std::to_string(num_outputs) + " output files for " +
                std::to_string(io.outputs.size()) + " graph outputs");
  }

  // Inputs: a file the reader refuses is reported after the import, which names unsupported
  // types and operators better (a sequence input, say, is not a tensor file at all).
  std::map<std::string, NpyArray> inputs;
  std::optional<Error> read_error;
  compiler::ImportOptions probe;
  for (size_t i = 0; i < num_inputs; ++i) {
    auto a = compiler::read_tensor_pb(pb("input", i).string());
    if (!a) {
      if (!read_error) read_error = a.error();
      continue;
    }
    probe.input_shapes[io.inputs[i]] = a->shape;
    inputs.emplace(io.inputs[i], std::move(*a));
  }
  // Skipped: what the importer refuses as unsupported (ENOTSUP), an input of a type outside
  // the IR, operators of other domains (the importer calls a model without an ai.onnx opset
  // malformed, but the training-domain tests are well-formed models of unsupported ops).
  auto graph = compiler::import_onnx(model_path, probe);
  if (!graph && graph.error().code == ENOTSUP) return skip(relative(graph.error().message, dir));
  if (read_error) {
    const std::string why = relative(read_error->message, dir);
    return read_error->code == ENOTSUP ? skip(why) : fail(why);
  }
  if (!graph && !io.foreign_op.empty()) return skip(io.foreign_op);
  if (!graph) return fail("import: " + relative(graph.error().message, dir));

  // Parameters become constants; the rest are run-time inputs.
  const std::vector<std::string> params = compiler::parameter_inputs(*graph);
  const std::set<std::string> param_set(params.begin(), params.end());
  compiler::CompileOptions co;
  co.device = device.config();
  co.host_only = options.host_only;
  std::map<std::string, NpyArray> run_inputs;
  for (auto& [name, array] : inputs) {
    if (param_set.count(name)) {
      co.import.constant_inputs.emplace(name, std::move(array));
    } else {
      co.import.input_shapes[name] = array.shape;
      run_inputs.emplace(name, std::move(array));
    }
  }
  auto compiled = compiler::compile_onnx(model_path, co);
  if (!compiled) return fail("compile: " + relative(compiled.error().message, dir));
  const size_t device_ops = compiled->device_ops, host_ops = compiled->host_ops;
  Outcome o = run_package(std::move(compiled->package), run_inputs, set, io, device, options);
  o.device_ops = device_ops, o.host_ops = host_ops;
  return o;
}

Outcome run_test_impl(const fs::path& dir, const Device& device, const TestOptions& options) {
  auto io = model_io((dir / "model.onnx").string());
  if (!io) return fail(io.error().message);
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && e.path().filename().string().starts_with("test_data_set_")) {
      sets.push_back(e.path());
    }
  }
  if (sets.empty()) return fail("no test_data_set_* directory");
  std::sort(sets.begin(), sets.end());
  Outcome o;
  uint64_t hazards = 0;  // over the data sets run
  std::string first_hazard;
  for (const fs::path& set : sets) {
    o = run_data_set(dir, set, *io, device, options);
    hazards += o.hazards;
    if (first_hazard.empty()) first_hazard = o.first_hazard;
    o.hazards = hazards;
    o.first_hazard = first_hazard;
    if (o.status != Status::kPass) {
      if (sets.size() > 1) o.reason = set.filename().string() + ": " + o.reason;
      return o;
    }
  }
  return o;
}

}  // namespace

const char* status_name(Status s) {
  switch (s) {
    case Status::kPass:
      return "PASS";
    case Status::kFail:
      return "FAIL";
    case Status::kSkip:
      return "SKIP";
  }
  return "?";
}

std::string compare(const NpyArray& got, const NpyArray& want, const Tolerance& tol) {
  if (got.dtype != want.dtype) {
    return std::string("dtype ") + format::dtype_name(got.dtype) + ", expected " +
           format::dtype_name(want.dtype);
  }
  if (got.shape != want.shape) {
    return "shape " + format::shape_text(got.shape) + ", expected " +
           format::shape_text(want.shape);
  }
  if (got.data.size() != want.data.size()) {
    return std::to_string(got.data.size()) + " data bytes, expected " +
           std::to_string(want.data.size());
  }
  Mismatches m;
  switch (want.dtype) {
    case DType::kFloat32:
      m = compare_floats<float>(got.view<float>(), want.view<float>(), tol);
      break;
    case DType::kFloat64:
      m = compare_floats<double>(got.view<double>(), want.view<double>(), tol);
      break;
    case DType::kBool: {
      std::vector<uint8_t> a(got.data.size()), b(want.data.size());
      for (size_t i = 0; i < a.size(); ++i) {
        a[i] = got.data[i] != std::byte{0};
        b[i] = want.data[i] != std::byte{0};
      }
      m = compare_exact<uint8_t>(a, b);
      break;
    }
    case DType::kInt8:
      m = compare_as<int8_t>(got, want);
      break;
    case DType::kUint8:
      m = compare_as<uint8_t>(got, want);
      break;
    case DType::kInt16:
      m = compare_as<int16_t>(got, want);
      break;
    case DType::kUint16:
      m = compare_as<uint16_t>(got, want);
      break;
    case DType::kInt32:
      m = compare_as<int32_t>(got, want);
      break;
    case DType::kUint32:
      m = compare_as<uint32_t>(got, want);
      break;
    case DType::kInt64:
      m = compare_as<int64_t>(got, want);
      break;
    case DType::kUint64:
      m = compare_as<uint64_t>(got, want);
      break;
    case DType::kFloat16:  // bit patterns
      m = compare_as<uint16_t>(got, want);
      break;
  }
  if (m.count == 0) return {};
  std::string s = "element " + std::to_string(m.first) + " " + index_string(m.first, want.shape) +
                  ": got " + number(m.got) + ", expected " + number(m.want);
  s += " (" + std::to_string(m.count) + " of " + std::to_string(want.num_elements()) +
       " elements differ";
  if (m.max_abs > 0) s += ", max abs diff " + number(m.max_abs);
  return s + ")";
}

Outcome run_test(const std::string& dir, const Device& device, const TestOptions& options) {
  try {
    return run_test_impl(fs::path(dir), device, options);
  } catch (const std::exception& e) {
    return fail(std::string("exception: ") + e.what());
  } catch (...) {
    return fail("unknown exception");
  }
}

Expected<std::map<std::string, std::string>> parse_expected_failures(std::string_view text,
                                                                     const std::string& source) {
  std::map<std::string, std::string> list;
  std::istringstream in{std::string(text)};
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string reason;
    if (auto hash = line.find('#'); hash != std::string::npos) {
      reason = line.substr(hash + 1);
      line.resize(hash);
    }
    std::istringstream words(line);
    std::string name, extra;
    if (!(words >> name)) continue;
    if (words >> extra) {
      return make_error(EINVAL, source + ":" + std::to_string(number) + ": '" + extra +
                                    "' after the test name (put reasons after '#')");
    }
    const auto first = reason.find_first_not_of(" \t");
    reason = first == std::string::npos ? "" : reason.substr(first);
    if (!list.emplace(name, reason).second) {
      return make_error(EINVAL,
                        source + ":" + std::to_string(number) + ": '" + name + "' listed twice");
    }
  }
  return list;
}

Expected<std::map<std::string, std::string>> read_expected_failures(const std::string& path) {
  std::ifstream f(path);
  if (!f) return make_error(ENOENT, path + ": cannot open the expected-failures file");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_expected_failures(ss.str(), path);
}

void load_onnx_schemas() {
  (void)onnx::OpSchemaRegistry::Schema("Relu", 14, "");
}

}  // namespace npu::conformance
