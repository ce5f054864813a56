// Session: a compiled model package ready to run from several threads at once — the engine
// of the Python module's npu.Session (bindings in bind_session.cpp), in plain C++.
//
// Semantics: an npu::Model runs one run() at a time and owns buffers at the fixed device
// addresses its package was compiled for, so two runs at once need two Models, each on its own
// open Device (its own address space). A Session keeps a pool of such instances, all loaded
// from one package: open() loads the first (so a package the device cannot run fails there),
// run() borrows an idle instance, or loads another while fewer than `max_instances` exist, or
// waits for one to come back. With "emu:" every instance is an emulated device of its own;
// with "unix:PATH" they are connections to the one npu-daemon device. Each run's statistics
// are copied out of its instance, so last_stats() is the last finished run's, whichever
// instance ran it. close() waits for the runs in flight, then unloads every instance; run()
// after close() is an error ("<name>: the session is closed").
// Threading: every method may be called from several threads at once (call run() and close()
// without the Python GIL held: they block). Lifetime: instances own their Model and Device;
// the package is shared with the caller and kept alive by the Session.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "npu/device.h"
#include "npu/expected.h"
#include "npu/format/npy.h"
#include "npu/format/package.h"
#include "npu/runtime/model.h"

namespace npu::python {

struct SessionOptions {
  size_t max_instances = 1;  // runs at once (at least 1)
  bool profile = true;       // collect job profiles (per-engine and per-layer statistics)
};

class Session {
 public:
  /// Loads `package` (named `name` in errors) on `device` (a device string for more
  /// instances; `first`, when given, is an already open Device of that string for the first).
  static Expected<std::unique_ptr<Session>> open(std::shared_ptr<const format::Package> package,
                                                 std::string name, std::string device,
                                                 std::optional<Device> first,
                                                 SessionOptions options);
  /// For open() only (make_unique needs a public constructor).
  struct Key {
    explicit Key() = default;
  };
  Session(Key, std::shared_ptr<const format::Package> package, std::string name, std::string device,
          SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::string& name() const { return name_; }
  const std::string& device() const { return device_; }
  const std::vector<TensorDesc>& inputs() const { return inputs_; }
  const std::vector<TensorDesc>& outputs() const { return outputs_; }
  const std::shared_ptr<const format::Package>& package() const { return package_; }
  /// The device's engines and clock (read from the first instance at open()).
  const std::vector<EngineInfo>& engines() const { return engines_; }
  uint64_t clock_hz() const { return clock_hz_; }
  const SessionOptions& options() const { return options_; }

  /// Runs the model on `inputs` on an idle instance (see the header comment); `options`
  /// gets collect_profile from SessionOptions::profile when the device profiles jobs.
  Expected<std::map<std::string, format::NpyArray>> run(
      const std::map<std::string, format::ArrayView>& inputs, RunOptions options);
  /// The statistics of the last finished run (also a failed one), or null before any.
  std::shared_ptr<const RunStats> last_stats() const;
  /// Instances loaded so far.
  size_t instances() const;

  /// Waits for the runs in flight and unloads the model; idempotent.
  void close();
  bool closed() const;

 private:
  struct Instance;
  Expected<std::unique_ptr<Instance>> load(std::optional<Device> device) const;
  /// An idle instance, a new one, or waits; error when closed.
  Expected<std::unique_ptr<Instance>> acquire();
  void release(std::unique_ptr<Instance> instance);

  const std::shared_ptr<const format::Package> package_;
  const std::string name_, device_;
  const SessionOptions options_;
  std::vector<TensorDesc> inputs_, outputs_;
  std::vector<EngineInfo> engines_;
  uint64_t clock_hz_ = 0;
  bool device_profiles_ = false;

  mutable std::mutex mu_;
  std::condition_variable idle_cv_;
  std::vector<std::unique_ptr<Instance>> idle_;
  size_t loaded_ = 0;   // instances loaded (idle or running)
  size_t loading_ = 0;  // being loaded by a run()
  bool closed_ = false;
  std::shared_ptr<const RunStats> last_stats_;
};

}  // namespace npu::python
