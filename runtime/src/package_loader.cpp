// Package loader: validation, buffers at their fixed VAs, the Context, the device segments'
// command buffers (package_loader.h).
#include "package_loader.h"

#include <fmt/format.h>

#include "segment_runner.h"

namespace npu::runtime {

namespace {

/// Checks `b`'s address range against the device's VA range and alignment (when known).
Expected<void> check_va(const format::BufferInfo& b, const Device& device,
                        const std::string& what) {
  const auto& va = device.params().va_range;
  if (!va) return ok();
  if (va->align && b.address % va->align != 0) {
    return make_error(EINVAL, fmt::format("{}: address {:#x} is not aligned to the device's "
                                          "VA alignment {:#x}",
                                          what, b.address, va->align));
  }
  if (b.address < va->start || b.address + b.size > va->end || b.address + b.size < b.address) {
    return make_error(EINVAL, fmt::format("{}: [{:#x}, {:#x}) is outside the device's VA "
                                          "range [{:#x}, {:#x})",
                                          what, b.address, b.address + b.size, va->start, va->end));
  }
  return ok();
}

/// Allocates `b` at its address, fills constants from their section and maps it.
Expected<Buffer> allocate(const format::BufferInfo& b, const ModelState& m,
                          const std::string& what) {
  auto err = [&](const Error& e) { return make_error(e.code, what + ": " + e.message); };
  BufferOptions opts;
  opts.fixed_va = b.address;
  opts.device_read_only = b.kind == format::BufferKind::kConstants;
  auto buf = Buffer::allocate(m.device, b.size, opts);
  if (!buf) return err(buf.error());
  if (b.kind == format::BufferKind::kConstants && b.section) {
    const auto& data = m.package.sections.at(*b.section).data;
    if (!data.empty()) {
      if (auto w = buf->write(0, data); !w) return err(w.error());
    }
  }
  // Map now: the host copies in and out of every buffer at each run.
  if (auto mp = buf->map(); !mp) return err(mp.error());
  return std::move(*buf);
}

TensorDesc desc(const format::PackageMetadata& md, const std::string& name) {
  const format::TensorInfo* t = md.find_tensor(name);
  return {name, t->dtype, t->shape};
}

}  // namespace

Expected<std::unique_ptr<ModelState>> load_package(const Device& device, format::Package package,
                                                   std::string name) {
  if (auto v = format::validate_package(package, name, &device.config()); !v) return v.error();
  auto m = std::make_unique<ModelState>(device);
  m->name = std::move(name);
  m->package = std::move(package);
  const auto& md = m->package.metadata;
  for (const auto& b : md.buffers) {
    const std::string what = m->name + ": buffer '" + b.name + "'";
    NPU_TRY(check_va(b, device, what));
    auto buf = allocate(b, *m, what);
    if (!buf) return buf.error();
    m->buffers.emplace(b.name, std::move(*buf));
  }
  auto ctx = Context::create(device);
  if (!ctx) return make_error(ctx.error().code, m->name + ": " + ctx.error().message);
  m->context.emplace(std::move(*ctx));
  for (const auto& n : md.inputs) m->inputs.push_back(desc(md, n));
  for (const auto& n : md.outputs) m->outputs.push_back(desc(md, n));
  NPU_TRY(prepare_device_segments(*m));
  return m;
}

}  // namespace npu::runtime
