// npu-classify: the README's main demo. Loads a compiled image classifier (.npub, from
// npu-compile), runs a directory of sample images through the device one by one, prints the
// predicted vs true label of each with its confidence, then the device's statistics
// (modeled cycles per image, per-engine utilization, host wall time). The samples directory
// holds image_<i>.npy files (one image each, the model's input shape) and labels.txt lines
// "image_<i>  <true index>  <class name ...>" ('#' starts a comment).
//
// It is also a small example of libnpu's model API: Device::open, Model::load, Model::run,
// Model::last_stats.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "npu/device.h"
#include "npu/runtime/model.h"

namespace {

struct Sample {
  std::string name;
  int label = -1;
  std::string class_name;
};

int fail(const std::string& what) {
  std::cerr << "npu-classify: " << what << "\n";
  return 1;
}

std::vector<Sample> read_labels(const std::filesystem::path& file, std::string* error) {
  std::vector<Sample> out;
  std::ifstream in(file);
  if (!in) {
    *error = file.string() + ": cannot read";
    return out;
  }
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    Sample s;
    if (!(ls >> s.name >> s.label)) {
      *error = fmt::format("{}:{}: expected 'image_<i> <label> <class>'", file.string(), n);
      return {};
    }
    std::string word;
    while (ls >> word && !std::isdigit(static_cast<unsigned char>(word[0]))) {
      s.class_name += (s.class_name.empty() ? "" : " ") + word;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Classify sample images with a compiled model on the NPU", "npu-classify"};
  std::string package, samples, device, trace;
  double min_accuracy = 0.0;
  app.add_option("PACKAGE", package, "the compiled classifier (.npub)")->required();
  app.add_option("SAMPLES", samples, "directory with image_<i>.npy and labels.txt")->required();
  app.add_option("--device", device, "device string (default: $NPU_DEVICE, else emu:)");
  app.add_option("--trace", trace, "write the first image's engine timeline (Chrome JSON)");
  app.add_option("--min-accuracy", min_accuracy, "exit 2 if fewer are right (0..1)");
  CLI11_PARSE(app, argc, argv);

  std::string error;
  const auto labels = read_labels(std::filesystem::path(samples) / "labels.txt", &error);
  if (!error.empty()) return fail(error);
  if (labels.empty()) return fail(samples + "/labels.txt: no samples");
  auto dev = npu::Device::open(device);
  if (!dev) return fail(dev.error().message);
  auto model = npu::Model::load(*dev, package);
  if (!model) return fail(model.error().message);
  if (model->inputs().size() != 1 || model->outputs().size() != 1)
    return fail(package + ": expected a model with one input and one output");
  const std::string in_name = model->inputs()[0].name;
  const std::string out_name = model->outputs()[0].name;

  fmt::print("{} on {}: input '{}', output '{}'\n\n", package, dev->config().name, in_name,
             out_name);
  fmt::print("{:<9} {:<14} {:<14} {:>6} {:>10} {:>9}\n", "image", "true", "predicted", "conf",
             "cycles", "wall ms");
  int right = 0;
  uint64_t cycles = 0, wall = 0;
  std::array<uint64_t, DRM_NPU_MAX_ENGINES> busy{};
  std::vector<std::string> names(10);
  for (const auto& s : labels) {
    if (s.label >= 0 && static_cast<size_t>(s.label) < names.size()) names[s.label] = s.class_name;
  }
  for (const auto& s : labels) {
    auto image =
        npu::format::read_npy((std::filesystem::path(samples) / (s.name + ".npy")).string());
    if (!image) return fail(image.error().message);
    npu::RunOptions options;
    options.collect_profile = dev->params().has(DRM_NPU_CAP_JOB_PROFILE);
    auto out = model->run({{in_name, *image}}, options);
    if (!out) return fail(out.error().message);
    const auto& logits = out->at(out_name);
    if (logits.dtype != npu::format::DType::kFloat32 || logits.num_elements() < 1)
      return fail("output '" + out_name + "' is not a float32 vector of class scores");
    const auto* v = reinterpret_cast<const float*>(logits.data.data());
    const auto n = static_cast<size_t>(logits.num_elements());
    const size_t best = static_cast<size_t>(std::max_element(v, v + n) - v);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += std::exp(double(v[i] - v[best]));
    const auto& st = model->last_stats();
    const std::string pred =
        best < names.size() && !names[best].empty() ? names[best] : "class " + std::to_string(best);
    const bool ok = static_cast<int>(best) == s.label;
    right += ok ? 1 : 0;
    cycles += st.device_cycles;
    wall += st.wall_ns;
    for (size_t e = 0; e < busy.size(); ++e) busy[e] += st.busy_cycles[e];
    fmt::print("{:<9} {:<14} {:<14} {:>5.1f}% {:>10} {:>9.3f} {}\n", s.name, s.class_name, pred,
               100.0 / sum, st.device_cycles, double(st.wall_ns) / 1e6, ok ? "ok" : "WRONG");
    if (!trace.empty() && &s == &labels.front()) {
      npu::TraceOptions to;
      to.clock_hz = dev->params().clock_hz;
      if (auto engines = dev->engine_info(); engines) to.engines = *engines;
      if (auto w = model->write_trace(trace, to); !w) return fail(w.error().message);
    }
  }
  const size_t count = labels.size();
  fmt::print("\n{} of {} right ({:.0f}%)\n", right, count, 100.0 * right / double(count));
  const double clock = double(dev->params().clock_hz);
  fmt::print(
      "device: {} cycles per image ({:.1f} us at {:.0f} MHz), host wall {:.3f} ms per image\n",
      cycles / count, double(cycles / count) / clock * 1e6, clock / 1e6,
      double(wall) / double(count) / 1e6);
  if (cycles) {
    auto engines = dev->engine_info();
    if (engines) {
      fmt::print("engine utilization:");
      for (const auto& e : *engines) {
        if (e.id < busy.size() && e.id != NPU_ENGINE_CP)
          fmt::print(" {} {:.1f}%", e.name, 100.0 * double(busy[e.id]) / double(cycles));
      }
      fmt::print("\n");
    }
  }
  if (double(right) < min_accuracy * double(count)) {
    std::cerr << "npu-classify: accuracy below --min-accuracy " << min_accuracy << "\n";
    return 2;
  }
  return 0;
}
