#include "sensitivity/worker.hpp"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "common/errors.hpp"

namespace bw::sensitivity {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

Worker::Worker(int cpu) : cpu_(cpu) {
  thread_ = std::thread([this] { loop(); });
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (int e = pthread_setaffinity_np(thread_.native_handle(), sizeof set, &set); e != 0) {
    {
      std::lock_guard lock(m_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
    throw RunError("cannot pin a thread to CPU " + std::to_string(cpu) + ": " + std::strerror(e));
  }
}

Worker::~Worker() {
  {
    std::lock_guard lock(m_);
    quit_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Worker::launch(std::function<void()> job) {
  std::unique_lock lock(m_);
  cv_.wait(lock, [this] { return !busy_; });
  job_ = std::move(job);
  busy_ = true;
  error_ = nullptr;
  cv_.notify_all();
}

void Worker::wait() {
  std::unique_lock lock(m_);
  cv_.wait(lock, [this] { return !busy_; });
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void Worker::loop() {
  std::unique_lock lock(m_);
  for (;;) {
    cv_.wait(lock, [this] { return quit_ || (busy_ && job_); });
    if (quit_) return;
    auto job = std::move(job_);
    job_ = nullptr;
    lock.unlock();
    std::exception_ptr error;
    try {
      job();
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    error_ = error;
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace bw::sensitivity
