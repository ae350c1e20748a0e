// A thread pinned to one CPU that runs jobs given to it: the bandit's streams and the pirate's
// chases run there, and their memory is first touched there (so it lies on that CPU's node).
#pragma once
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace bw::sensitivity {

class Worker {
 public:
  explicit Worker(int cpu);  // throws RunError when the thread cannot be pinned to cpu
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Starts job on the worker (after the one before has ended); wait() blocks until it ends and
  // rethrows what it threw.
  void launch(std::function<void()> job);
  void wait();
  void run(std::function<void()> job) {
    launch(std::move(job));
    wait();
  }
  int cpu() const { return cpu_; }

 private:
  void loop();
  int cpu_;
  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> job_;
  bool busy_ = false, quit_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

// Seconds on the monotonic clock.
double now_s();

}  // namespace bw::sensitivity
