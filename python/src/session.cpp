// Session: a pool of loaded Models for runs from several threads (session.h).
#include "session.h"

#include <utility>

namespace npu::python {

struct Session::Instance {
  Device device;
  Model model;
};

Session::Session(Key, std::shared_ptr<const format::Package> package, std::string name,
                 std::string device, SessionOptions options)
    : package_(std::move(package)),
      name_(std::move(name)),
      device_(std::move(device)),
      options_(options) {}

Session::~Session() {
  close();
}

Expected<std::unique_ptr<Session>> Session::open(std::shared_ptr<const format::Package> package,
                                                 std::string name, std::string device,
                                                 std::optional<Device> first,
                                                 SessionOptions options) {
  if (options.max_instances == 0) {
    return make_error(EINVAL, name + ": max_parallel must be at least 1");
  }
  auto s = std::make_unique<Session>(Key{}, std::move(package), std::move(name), std::move(device),
                                     options);
  auto instance = s->load(std::move(first));
  if (!instance) return instance.error();
  const Device& dev = (*instance)->device;
  auto engines = dev.engine_info();
  if (!engines) return engines.error();
  s->engines_ = std::move(*engines);
  s->clock_hz_ = dev.params().clock_hz;
  s->device_profiles_ = dev.params().has(DRM_NPU_CAP_JOB_PROFILE);
  s->inputs_ = (*instance)->model.inputs();
  s->outputs_ = (*instance)->model.outputs();
  s->idle_.push_back(std::move(*instance));
  s->loaded_ = 1;
  return s;
}

Expected<std::unique_ptr<Session::Instance>> Session::load(std::optional<Device> device) const {
  if (!device) {
    auto opened = Device::open(device_);
    if (!opened) return opened.error();
    device = std::move(*opened);
  }
  auto model = Model::load(*device, *package_, name_);
  if (!model) return model.error();
  return std::make_unique<Instance>(Instance{std::move(*device), std::move(*model)});
}

Expected<std::unique_ptr<Session::Instance>> Session::acquire() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (closed_) return make_error(EBADF, name_ + ": the session is closed");
    if (!idle_.empty()) {
      std::unique_ptr<Instance> instance = std::move(idle_.back());
      idle_.pop_back();
      return instance;
    }
    if (loaded_ + loading_ < options_.max_instances) {
      ++loading_;
      lock.unlock();
      auto instance = load(std::nullopt);
      lock.lock();
      --loading_;
      if (instance) ++loaded_;
      idle_cv_.notify_all();
      if (instance && closed_) {
        idle_.push_back(std::move(*instance));  // close() unloads it
        return make_error(EBADF, name_ + ": the session is closed");
      }
      return instance;
    }
    idle_cv_.wait(lock);
  }
}

void Session::release(std::unique_ptr<Instance> instance) {
  {
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(instance));
  }
  idle_cv_.notify_all();
}

Expected<std::map<std::string, format::NpyArray>> Session::run(
    const std::map<std::string, format::ArrayView>& inputs, RunOptions options) {
  auto instance = acquire();
  if (!instance) return instance.error();
  options.collect_profile = options_.profile && device_profiles_;
  auto outputs = (*instance)->model.run_views(inputs, options);
  auto stats = std::make_shared<const RunStats>((*instance)->model.last_stats());
  {
    std::lock_guard lock(mu_);
    last_stats_ = std::move(stats);
  }
  release(std::move(*instance));
  return outputs;
}

std::shared_ptr<const RunStats> Session::last_stats() const {
  std::lock_guard lock(mu_);
  return last_stats_;
}

size_t Session::instances() const {
  std::lock_guard lock(mu_);
  return loaded_;
}

void Session::close() {
  std::vector<std::unique_ptr<Instance>> unload;
  {
    std::unique_lock lock(mu_);
    closed_ = true;
    idle_cv_.notify_all();  // runs waiting for an instance give up
    idle_cv_.wait(lock, [&] { return loading_ == 0 && idle_.size() == loaded_; });
    unload = std::move(idle_);
    idle_.clear();
    loaded_ = 0;
  }
  // The Models and Devices go here, outside the lock.
}

bool Session::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

}  // namespace npu::python
