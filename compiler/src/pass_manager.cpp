// The pass registry (built from pass_registry.def) and the pass manager's run loop.
#include "npu/compiler/pass_manager.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "npu/log.h"

namespace npu::compiler {

namespace {

spdlog::logger& log() {
  return npu::logger("npuc");
}

bool contains(const std::vector<std::string>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

const std::vector<PassInfo>& registered_passes() {
  static const std::vector<PassInfo> passes = {
#define NPUC_PASS(cls, pass_name, description) {pass_name, description},
#include "npu/compiler/pass_registry.def"
#undef NPUC_PASS
  };
  return passes;
}

std::unique_ptr<Pass> create_pass(std::string_view name) {
#define NPUC_PASS(cls, pass_name, description) \
  if (name == pass_name) return create_##cls##Pass();
#include "npu/compiler/pass_registry.def"
#undef NPUC_PASS
  return nullptr;
}

PassManager PassManager::default_pipeline() {
  PassManager pm;
  for (const PassInfo& p : registered_passes()) pm.add(create_pass(p.name));
  return pm;
}

std::vector<std::string_view> PassManager::pass_names() const {
  std::vector<std::string_view> names;
  for (const auto& p : passes_) names.push_back(p->name());
  return names;
}

Expected<void> PassManager::run(Graph& g, const PassOptions& options) const {
  for (const auto* list : {&options.print_after, &options.disable}) {
    for (const std::string& name : *list) {
      if (name != "all" && !create_pass(name)) {
        return make_error(EINVAL, "unknown pass '" + name + "'");
      }
    }
  }
  for (const auto& pass : passes_) {
    const std::string name(pass->name());
    if (contains(options.disable, name)) continue;
    const auto start = std::chrono::steady_clock::now();
    auto changed = pass->run(g);
    if (!changed) return make_error(changed.error().code, name + ": " + changed.error().message);
    if (options.verify_each) {
      if (auto r = g.verify(); !r) {
        return make_error(EINVAL, name + ": left an invalid graph: " + r.error().message);
      }
    }
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    log().debug("pass {}: {} ({} us, {} nodes)", name, *changed ? "changed" : "no change", us,
                g.nodes.size());
    if (contains(options.print_after, name) || contains(options.print_after, "all")) {
      const std::string dump = to_string(g);
      if (options.printer) {
        options.printer(name, dump);
      } else {
        log().info("graph after {}:\n{}", name, dump);
      }
    }
  }
  return ok();
}

}  // namespace npu::compiler
