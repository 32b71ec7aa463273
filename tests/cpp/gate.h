// Test support: a closed gate on a virtual-device stream (ortdlpack_vd_stream_pause): work queued behind it waits
// until open(). A watchdog opens it after `timeout` if the test did not: code that waits on the host behind the gate
// (a regression) makes the test fail (timed_out()) instead of hanging it; a test may also rely on the watchdog to
// release the work later (then timed_out() is what it expects).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace ortdlpack::test {

class Gate {
 public:
  using StreamCall = int (*)(void*);  // ortdlpack_vd_stream_pause / _resume of the library that made the stream

  Gate(StreamCall pause, StreamCall resume, void* stream, std::chrono::milliseconds timeout = std::chrono::seconds(10))
      : resume_(resume), stream_(stream) {
    if (pause(stream_) != 0) throw std::runtime_error("ortdlpack_vd_stream_pause failed");
    watchdog_ = std::thread([this, timeout] {
      std::unique_lock<std::mutex> lock(m_);
      if (!cv_.wait_for(lock, timeout, [this] { return open_; })) {
        timed_out_ = true;
        open_ = true;
        resume_(stream_);
      }
    });
  }
  ~Gate() {
    open();
    watchdog_.join();
  }
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;

  void open() {
    {
      std::lock_guard<std::mutex> lock(m_);
      if (open_) return;
      open_ = true;
      resume_(stream_);
    }
    cv_.notify_all();
  }
  bool timed_out() {
    std::lock_guard<std::mutex> lock(m_);
    return timed_out_;
  }

 private:
  StreamCall resume_;
  void* stream_;
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = false;
  bool timed_out_ = false;
  std::thread watchdog_;
};

}  // namespace ortdlpack::test
