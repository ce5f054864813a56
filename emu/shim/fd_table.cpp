// FdTable (fd_table.h).
#include "fd_table.h"

#include <mutex>

#include "no_destructor.h"

namespace npu::shim {

FdTable& FdTable::get() {
  static NoDestructor<FdTable> table;
  return *table;
}

std::shared_ptr<OpenFile> FdTable::find(int fd) const {
  if (empty()) return nullptr;
  std::lock_guard lk(mu_);
  const auto it = fds_.find(fd);
  return it == fds_.end() ? nullptr : it->second;
}

std::shared_ptr<OpenFile> FdTable::add(int fd, std::shared_ptr<OpenFile> file) {
  std::lock_guard lk(mu_);
  std::shared_ptr<OpenFile>& slot = fds_[fd];
  std::shared_ptr<OpenFile> before = std::exchange(slot, std::move(file));
  size_.store(fds_.size(), std::memory_order_release);
  return before;
}

std::shared_ptr<OpenFile> FdTable::remove(int fd) {
  if (empty()) return nullptr;
  std::lock_guard lk(mu_);
  const auto it = fds_.find(fd);
  if (it == fds_.end()) return nullptr;
  std::shared_ptr<OpenFile> file = std::move(it->second);
  fds_.erase(it);
  size_.store(fds_.size(), std::memory_order_release);
  return file;
}

std::vector<std::pair<int, std::shared_ptr<OpenFile>>> FdTable::entries() const {
  std::lock_guard lk(mu_);
  return {fds_.begin(), fds_.end()};
}

void FdTable::forked() {
  for (auto& [fd, file] : fds_) file->forked();
  mu_.unlock();  // taken by lock_for_fork() in this thread, before fork()
}

}  // namespace npu::shim
