/* The test CUDA runtime (libcudart.so.13 of the test build, tests/cpp/cuda_sim): the CUDA runtime calls ortdlpack
 * makes, and those a test producer needs, over the streams of the virtual device's CUDA flavor
 * (libortdlpack_virtual_cuda.so). Built in the test tree only: never installed, never on a search path; a test
 * process loads it by its absolute path before anything asks for "libcudart.so.13".
 *
 * What it implements, each as the CUDA Runtime API reference (CUDA 13) documents it — the test files cite the
 * sections — with the error codes of the cudaError enum:
 *   devices      cudaGetDeviceCount, cudaGetDevice, cudaSetDevice (the current device is per host thread, 0 at first)
 *   streams      cudaStreamCreate(WithFlags), cudaStreamDestroy, cudaStreamSynchronize, cudaStreamQuery,
 *                cudaStreamWaitEvent, cudaLaunchHostFunc, cudaMemcpyAsync (host <-> device)
 *   events       cudaEventCreate(WithFlags), cudaEventRecord, cudaEventSynchronize, cudaEventQuery, cudaEventDestroy
 *   special streams: 0 and cudaStreamLegacy (0x1) name the legacy default stream of the current device, which
 *                synchronizes with the blocking streams of that device; cudaStreamPerThread (0x2) the calling thread's
 *                default stream of the current device (a blocking stream)
 *   errors       cudaGetErrorName, cudaGetErrorString
 * A cudaStream_t is the virtual device's native stream handle (what its OrtSyncStreams return). Streams ORT creates
 * are non-blocking, as ONNX Runtime's CUDA EP creates its own. A handle that is no live stream or event is
 * cudaErrorInvalidResourceHandle (a real runtime may crash instead: the simulation reports it).
 *
 * The test-only ABI below injects faults and counts calls. */
#ifndef ORTDLPACK_CUDA_SIM_H_
#define ORTDLPACK_CUDA_SIM_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes of the cudaError enum the simulation returns. */
enum {
  kCudaSimSuccess = 0,
  kCudaSimErrorInvalidValue = 1,
  kCudaSimErrorInvalidDevice = 101,
  kCudaSimErrorInvalidResourceHandle = 400,
  kCudaSimErrorNotReady = 600,
  kCudaSimErrorIllegalAddress = 700,
  kCudaSimErrorNotPermitted = 800
};

/* The `n`-th call from now (1: the next one) of the runtime function `function` ("cudaStreamWaitEvent", ...) returns
 * `error` without doing anything, once. n = 0 removes a pending injection for that function. */
__attribute__((visibility("default"))) void ortdlpack_cuda_sim_fail(const char* function, int error, uint64_t n);

/* How many times `function` was called since the last reset (injected failures included). */
__attribute__((visibility("default"))) uint64_t ortdlpack_cuda_sim_calls(const char* function);

/* How many runtime calls were made from inside a host function (cudaLaunchHostFunc: "must not make any CUDA API
 * calls"; each such call returned cudaErrorNotPermitted). */
__attribute__((visibility("default"))) uint64_t ortdlpack_cuda_sim_calls_from_host_functions(void);

/* Zeroes the call counters and removes every pending injection. */
__attribute__((visibility("default"))) void ortdlpack_cuda_sim_reset(void);

/* The virtual-device stream a handle names for the calling thread (0, 0x1 and 0x2 resolved on the current device),
 * NULL for none: lets a test look at what ortdlpack waited on. */
__attribute__((visibility("default"))) void* ortdlpack_cuda_sim_stream(void* handle);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ORTDLPACK_CUDA_SIM_H_ */
