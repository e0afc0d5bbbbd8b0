// gate.h: Gate, work that completes when the test opens it. A CPU launch ordered after a closed
// gate (LaunchOptions::after) is deterministically in flight: its worker waits for the gate.
// Shared by the execution-model unit tests (execution_helpers.h) and tests/tools/exit_in_flight.
#pragma once

#include <tessera/tessera.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>

namespace exec_test {

class Gate final : public tessera::detail::Completion {
 public:
  Gate() { label = std::make_shared<const std::string>("a test gate"); }
  bool done() const override {
    std::lock_guard lock(mutex_);
    return open_;
  }
  void wait() const override {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return open_; });
  }
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  bool open_ = false;
};

}  // namespace exec_test
