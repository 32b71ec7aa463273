/* Public C ABI of the ortdlpack virtual device plugin EP (libortdlpack_virtual_device.so).
 *
 * The library is an ONNX Runtime plugin execution-provider library (entry points CreateEpFactories /
 * ReleaseEpFactory). Besides those it exports the small, plain-C test ABI declared here: counters of what the
 * virtual device did and one-shot failure injection. Load the same .so that ORT loaded (dlopen, or Python
 * ctypes.CDLL with the same path) to reach the same counters: they are process-wide, shared by both devices.
 *
 * Everything here is thread-safe. The counter and injection functions never allocate or fail; the stream functions
 * report failure by their return value.
 */
#ifndef ORTDLPACK_VIRTUAL_DEVICE_H_
#define ORTDLPACK_VIRTUAL_DEVICE_H_

#include <stdint.h>

#if defined(_WIN32)
#define ORTDLPACK_VD_EXPORT __declspec(dllexport)
#else
#define ORTDLPACK_VD_EXPORT __attribute__((visibility("default")))
#endif

/* PCI-style vendor id of the virtual device: OrtMemoryInfo vendor id, OrtHardwareDevice vendor id and
 * OrtEpFactory::GetVendorId. Not a real PCI vendor. */
#define ORTDLPACK_VD_VENDOR_ID 0xD1A9

/* Execution provider name, as listed by GetEpDevices / onnxruntime.get_ep_devices(). */
#define ORTDLPACK_VD_EP_NAME "VirtualDeviceEP"

/* Number of virtual devices (OrtEpDevices) exposed; their device ids are 0 .. ORTDLPACK_VD_NUM_DEVICES - 1. */
#define ORTDLPACK_VD_NUM_DEVICES 2

/* OrtMemoryInfo names of the two memory kinds each device has. */
#define ORTDLPACK_VD_MEMINFO_DEVICE "VirtualDevice"   /* OrtDeviceMemoryType_DEFAULT: guarded, host cannot touch */
#define ORTDLPACK_VD_MEMINFO_HOST "VirtualDeviceHost" /* OrtDeviceMemoryType_HOST_ACCESSIBLE: plain host memory */

/* The CUDA flavor (libortdlpack_virtual_cuda.so: the same library built with ORTDLPACK_VD_CUDA=1, for tests only and
 * never installed) presents the devices as ONNX Runtime's CUDA plugin EP presents NVIDIA GPUs: this EP name, PCI
 * vendor 0x10DE, hardware type GPU, memory named as the CUDA EP names it. Its stream handles are cudaStream_ts of the
 * test CUDA runtime (tests/cpp/cuda_sim); it exports no ortdlpack_ep_stream_* functions. */
#define ORTDLPACK_VD_CUDA_EP_NAME "CUDAExecutionProvider"
#define ORTDLPACK_VD_CUDA_VENDOR_ID 0x10DE
#define ORTDLPACK_VD_CUDA_MEMINFO_DEVICE "Cuda"
#define ORTDLPACK_VD_CUDA_MEMINFO_HOST "CudaPinned"

/* OrtEpDevice EP-metadata key telling a DLPack exporter which DLDeviceType the device's DEFAULT memory is, as a
 * decimal string. The virtual device sets it to "12" (kDLExtDev). See the README for the convention. */
#define ORTDLPACK_VD_DLPACK_DEVICE_TYPE_KEY "dlpack.device_type"

/* Environment variable read once, the first time the library needs it (at the latest when ORT calls
 * CreateEpFactories): "0" turns the memory guard off
 * (device memory then stays readable and writable by the host). Any other value, or unset: guard on. */
#define ORTDLPACK_VD_GUARD_ENV "ORTDLPACK_VD_GUARD"

/* Environment variable read once (first use): how long, in microseconds, each copy or write enqueued on a stream
 * takes on the device (the worker sleeps that long, then copies; queued work adds up). Default 1000. See
 * ortdlpack_vd_set_stream_delay_us. */
#define ORTDLPACK_VD_STREAM_DELAY_ENV "ORTDLPACK_VD_STREAM_DELAY_US"

#ifdef __cplusplus
extern "C" {
#endif

/* All fields are uint64_t so that Python ctypes can mirror the struct with one field type.
 * Fields are only ever appended, never reordered. */
typedef struct OrtdlpackVdCounters {
  /* Device (OrtDeviceMemoryType_DEFAULT) memory. */
  uint64_t allocs;     /* successful device allocations (zero-byte ones included) */
  uint64_t frees;      /* device frees */
  uint64_t live_bytes; /* bytes currently allocated on the devices (requested sizes). State, not reset. */
  /* Data transfer. */
  uint64_t copies;    /* tensors copied successfully (one CopyTensors call may copy many) */
  uint64_t bytes_h2d; /* host (CPU or HOST_ACCESSIBLE) -> device bytes */
  uint64_t bytes_d2h; /* device -> host bytes */
  uint64_t bytes_d2d; /* device -> device bytes, same or different device id */
  /* Additions. */
  uint64_t live_allocs;     /* device allocations currently alive. State, not reset. */
  uint64_t host_allocs;     /* HOST_ACCESSIBLE allocations */
  uint64_t host_frees;      /* HOST_ACCESSIBLE frees */
  uint64_t host_live_bytes; /* HOST_ACCESSIBLE bytes currently allocated. State, not reset. */
  uint64_t bytes_h2h;       /* CPU <-> HOST_ACCESSIBLE bytes (copied by this EP's data transfer) */
  uint64_t copy_calls;      /* calls of the data transfer's CopyTensors */
  uint64_t failed_allocs;   /* allocations that failed (injected or out of memory) */
  uint64_t failed_copies;   /* tensor copies that failed (injected or invalid) */
  /* Streams (asynchronous work). */
  uint64_t async_copies; /* copies and writes enqueued on a stream (also counted in `copies`/bytes when enqueued; one
                            that fails when the queue reaches it also counts in failed_copies) */
  uint64_t stream_waits; /* waits enqueued on a stream (for another stream's event / an ORT notification) */
  uint64_t host_syncs;   /* host synchronizations of a stream */
} OrtdlpackVdCounters;

/* Copy a consistent-enough snapshot of the counters (each field is read atomically). */
ORTDLPACK_VD_EXPORT void ortdlpack_vd_get_counters(OrtdlpackVdCounters* out);

/* sizeof(OrtdlpackVdCounters): a mirror of the struct in another language (Python ctypes) checks it is not smaller
 * than the struct this library writes. */
ORTDLPACK_VD_EXPORT uint64_t ortdlpack_vd_counters_size(void);

/* Zero every event counter. The state fields (live_bytes, live_allocs, host_live_bytes) keep describing what is
 * allocated right now, so a test can reset while tensors are alive and still balance allocs against frees. */
ORTDLPACK_VD_EXPORT void ortdlpack_vd_reset_counters(void);

/* Make the n-th allocation from now (device or host-accessible, counted together; n = 1 is the next one) return
 * NULL, once. 0 turns a pending injection off. */
ORTDLPACK_VD_EXPORT void ortdlpack_vd_fail_alloc_at(uint64_t n);

/* Make the n-th tensor copy from now (n = 1 is the next tensor the data transfer copies) fail, once: CopyTensors
 * then returns an ORT_FAIL status; tensors before it in the same call were copied, those after it were not.
 * 0 turns a pending injection off. */
ORTDLPACK_VD_EXPORT void ortdlpack_vd_fail_copy_at(uint64_t n);

/* 1 when device memory is guarded (PROT_NONE outside the data transfer), 0 when ORTDLPACK_VD_GUARD=0. */
ORTDLPACK_VD_EXPORT int ortdlpack_vd_guard_enabled(void);

/* The device id of the last OrtEp the factory created (the first device ORT handed CreateEp: the device a session's
 * provider options selected), -1 before any. */
ORTDLPACK_VD_EXPORT int ortdlpack_vd_last_ep_device(void);

/* 1 when [p, p + nbytes) lies inside one live device (DEFAULT) allocation, else 0. Never touches the memory. */
ORTDLPACK_VD_EXPORT int ortdlpack_vd_is_device_pointer(const void* p, uint64_t nbytes);

/* ---- Streams --------------------------------------------------------------------------------------------------
 * Every stream of the virtual device is a FIFO queue run by its own worker thread: work enqueued on it completes
 * later, in order. A stream is named by its native handle: what OrtApi::SyncStream_GetHandle returns for a stream
 * made by CreateSyncStreamForEpDevice, or what ortdlpack_vd_stream_create returns. Functions taking a handle return
 * 0 on success and -1 when the handle is not a live virtual-device stream (or, for the enqueue functions, when the
 * memory is not valid / out of memory); they never crash on a bad handle. */

/* Sets the delay of stream work (see ORTDLPACK_VD_STREAM_DELAY_ENV); applies to work enqueued from now on. */
ORTDLPACK_VD_EXPORT void ortdlpack_vd_set_stream_delay_us(uint64_t microseconds);
ORTDLPACK_VD_EXPORT uint64_t ortdlpack_vd_stream_delay_us(void);

/* A producer stream of device `device_id`, outside ORT (a test producer's own stream). NULL for a bad id or when no
 * thread can be started. Destroy it with ortdlpack_vd_stream_destroy (runs its queued work first). */
ORTDLPACK_VD_EXPORT void* ortdlpack_vd_stream_create(uint32_t device_id);
ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_destroy(void* stream);

/* Enqueue on `stream`: write nbytes from host memory `src` (snapshotted now: the caller may reuse it at once) into
 * device memory `dst`, which must lie inside one live device allocation (checked now and again when it runs). */
ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_write(void* stream, void* dst, const void* src, uint64_t nbytes);

/* Enqueue on `stream`: read nbytes of device memory `src` into host memory `dst`, written when the queue reaches it
 * (synchronize the stream before reading `dst`; keep `dst` alive until then). */
ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_read(void* stream, void* dst, const void* src, uint64_t nbytes);

/* Make `waiter` wait (on the device: the host does not block) for everything enqueued on `producer` so far, like
 * cudaEventRecord(producer) + cudaStreamWaitEvent(waiter). */
ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_wait(void* waiter, void* producer);

/* Block the calling thread until everything enqueued on `stream` so far has run. Returns -2 when an asynchronous
 * copy on it failed since the last synchronization (e.g. its device memory was freed before the queue got there). */
ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_synchronize(void* stream);

/* Deterministic tests: pause enqueues a closed gate (work behind it waits, whatever the delay); resume opens the
 * oldest closed gate of the stream (-1 when none is closed). A stream destroyed while paused would never drain:
 * resume it first. */
ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_pause(void* stream);
ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_resume(void* stream);

/* Enqueue on `stream`: call fn(user_data) once, on the stream's worker thread, when everything enqueued before it has
 * run (like cudaLaunchHostFunc). */
ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_launch_host_func(void* stream, void (*fn)(void*), void* user_data);

/* The device id of a live stream, -1 for a handle that is none. */
ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_device(void* stream);

/* Events, as a device runtime has them (what a CUDA runtime's cudaEvent_t needs): record captures the work enqueued
 * on a stream so far (a later record replaces it); a stream that waits for an event waits, on the device, for the work
 * its latest record captured (nothing when it was never recorded); destroying an event with a record still pending
 * is allowed (the stream finishes it). Functions return 0 on success and -1 for a handle that is no live event or
 * stream. */
ORTDLPACK_VD_EXPORT void* ortdlpack_vd_event_create(void);
ORTDLPACK_VD_EXPORT int ortdlpack_vd_event_destroy(void* event);
ORTDLPACK_VD_EXPORT int ortdlpack_vd_event_record(void* event, void* stream);
ORTDLPACK_VD_EXPORT int ortdlpack_vd_stream_wait_event(void* stream, void* event);
/* The host waits for the work the latest record captured. */
ORTDLPACK_VD_EXPORT int ortdlpack_vd_event_synchronize(void* event);
/* 1 when the work the latest record captured is complete (or the event was never recorded), 0 when not yet. */
ORTDLPACK_VD_EXPORT int ortdlpack_vd_event_query(void* event);

/* 0: ortdlpack_ep_stream_launch_host_func refuses (returns -1), as from an EP that exports only the two required
 * functions of the convention; nonzero (the default): it enqueues. Tests of ortdlpack's fallback. */
ORTDLPACK_VD_EXPORT void ortdlpack_vd_set_host_funcs(int enabled);

/* ---- The ortdlpack stream convention for EP libraries (README, "Streams"; not in the CUDA flavor) ------------
 * Plugin EP libraries may export these functions, taking the native handles their OrtSyncStreams return; the
 * public ORT C API has no way to wait for an OrtSyncStream, so this is how ortdlpack orders work across streams.
 * Return 0 on success, nonzero on failure. The first two are required; the third is optional (ortdlpack then learns
 * that queued work completed only when it waits for the stream on the host). The virtual device exports all three
 * (the same as ortdlpack_vd_stream_wait / _synchronize / _launch_host_func above). */
ORTDLPACK_VD_EXPORT int ortdlpack_ep_stream_wait(void* waiter, void* producer);
ORTDLPACK_VD_EXPORT int ortdlpack_ep_stream_synchronize(void* stream);
/* Calls fn(user_data) exactly once, on any thread, once everything enqueued on `stream` before the call has
 * completed, when it returns 0 (never when it returns nonzero). fn must not block nor call into the EP. */
ORTDLPACK_VD_EXPORT int ortdlpack_ep_stream_launch_host_func(void* stream, void (*fn)(void*), void* user_data);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ORTDLPACK_VIRTUAL_DEVICE_H_ */
