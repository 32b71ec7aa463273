// Internal: ortdlpack's stream of one device and what it knows about the work there (docs/streams.md).
//
// One DeviceStream per device memory ortdlpack touches: an OrtSyncStream of the env's OrtEpDevice for that memory,
// created on first use and never released (the EP library may be unregistered before the process ends), with the
// native calls of its stream backend (stream_backend.h). Work on it is counted, not flagged: every time work is put on
// the stream (an ortdlpack copy, a producer's work ordered before it, a caller's stream adopted) it gets the next
// sequence number once it is enqueued, and `completed` is the highest number known to be complete. So a host wait
// marks complete only what was submitted when it began: work submitted meanwhile by another thread stays pending.
// Owners of memory that queued work still reads or writes are kept until their work's number is complete, and are
// dropped on an ortdlpack call (never on the EP's threads: a DLPack deleter may need the GIL or call the device).
#pragma once

#include <onnxruntime_c_api.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "stream_backend.h"

namespace ortdlpack::detail {

class DeviceStream {
 public:
  DeviceStream(const OrtEpDevice* ep_device, int device_id, OrtSyncStream* stream,
               std::unique_ptr<NativeStreams> native);
  DeviceStream(const DeviceStream&) = delete;
  DeviceStream& operator=(const DeviceStream&) = delete;

  const OrtEpDevice* ep_device() const { return ep_device_; }
  OrtSyncStream* stream() const { return stream_; }
  void* handle() const { return handle_; }
  const NativeStreams& native() const { return *native_; }

  // Counts work just enqueued on the stream (or ordered before it); returns its sequence number.
  uint64_t submit();
  // Whether work was submitted that is not known to be complete.
  bool pending() const;
  // The host waits for everything submitted so far (no-op when nothing is pending), then drops the owners kept for
  // it. Error(kRuntime) when the EP's runtime fails.
  void synchronize();
  // The host waits for another stream of this device (a caller's); no sequence number moves.
  void wait_on_host(void* other) const;
  // Keeps `owner` (of `bytes` of device memory) until the work numbered `seq` is complete, learnt from a host
  // function the EP's runtime runs then (one at a time per stream: it covers everything submitted before it) or from
  // the next host wait. The bound: when more than kMaxKept owners, or more than one owner of more than kMaxKeptBytes
  // in all, would be held, the host waits (and releases them all).
  void keep_until(uint64_t seq, std::shared_ptr<void> owner, size_t bytes);
  // Drops the owners whose work is known to be complete (cheap when there are none).
  void release_completed();

  static constexpr size_t kMaxKept = 1024;
  static constexpr size_t kMaxKeptBytes = size_t{64} << 20;

 private:
  struct Kept {
    uint64_t seq;
    size_t bytes;
    std::shared_ptr<void> owner;
  };
  void mark_completed(uint64_t seq);
  // Launches a host function marking complete what was submitted so far, unless one is outstanding.
  void launch_notice();
  [[noreturn]] void wait_failed(int rc) const;

  const OrtEpDevice* ep_device_;
  int device_id_;
  OrtSyncStream* stream_;
  void* handle_;
  std::unique_ptr<NativeStreams> native_;
  std::atomic<uint64_t> submitted_{0};
  std::atomic<uint64_t> completed_{0};
  std::atomic<uint64_t> oldest_kept_{UINT64_MAX};  // the lowest seq kept; UINT64_MAX when none
  std::atomic<bool> notice_outstanding_{false};    // a host function is launched and has not run yet
  std::atomic<uint64_t> notice_seq_{0};            // what it marks complete
  std::mutex kept_mutex_;
  std::vector<Kept> kept_;
  size_t kept_bytes_ = 0;
};

// ortdlpack's stream of the device owning `memory`, or NULL for host memory and for a device whose EP offers no
// stream ortdlpack can wait for (or that no EP device of the env serves). Reads the env's EP-device list and compares
// it with the one its table was built from (an EP library registered or unregistered since makes it build the table
// again); registers nothing (ep_library.h). Drops what the stream kept for work now known to be complete.
DeviceStream* find_stream(const OrtMemoryInfo* memory);

}  // namespace ortdlpack::detail
