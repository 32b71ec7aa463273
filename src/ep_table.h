// Internal: the one table of execution providers and the device memory they own. Every fact ortdlpack knows about
// an EP or a vendor lives in its row: the names users write, where its library comes from, what to install, the
// memory it owns and the DLPack device type of that memory, and how ortdlpack orders work on its streams. Adding an
// EP is adding a row (src/ep_table.cc; docs/devices.md lists them).
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "ort.h"

namespace ortdlpack::detail {

// PCI vendor ids ORT uses in OrtMemoryInfo (the table's vendor_id column).
inline constexpr uint32_t kVendorNvidia = 0x10DE;
inline constexpr uint32_t kVendorAmd = 0x1002;
inline constexpr uint32_t kVendorIntel = 0x8086;
inline constexpr uint32_t kVendorApple = 0x106B;
inline constexpr uint32_t kVendorQualcomm = 0x5143;

// How ortdlpack waits for a native stream of an EP's device: the two operations ORT's C API lacks (stream.h). An EP
// library that exports the ortdlpack stream convention is used through it whatever its row says.
enum class StreamBackend {
  kNone,         // nothing else: copies are synchronous, producers are asked for no stream
  kCudaRuntime,  // the CUDA runtime already loaded in the process (cudaStreamSynchronize, events)
};

// One kind of device memory an EP owns, and the DLPack device type every framework reads it as.
struct MemoryRow {
  const char* name;  // the OrtMemoryInfo name the EP gives it: the key when ORT reports vendor 0, and the name
                     // ortdlpack uses when it creates a memory info for the DLPack device
  OrtMemoryInfoDeviceType device_type;  // not compared for HOST_ACCESSIBLE memory (pinned memory of any type)
  OrtDeviceMemoryType memory_type;
  DLDeviceType dl_type;
};

// A provider option an EP needs to be usable, and the value ortdlpack gives it when the caller sets neither it nor
// the option that replaces it (docs/devices.md lists them).
struct OptionDefault {
  const char* key;  // nullptr: the EP needs none
  const char* value;
  const char* unless;  // another option that makes `key` unnecessary, or nullptr
};

struct EpRow {
  const char* ep_name;     // the EP's name in ORT (OrtEpDevice EP name, session provider name); a library is
                           // registered under it (EPs that name themselves after their registration take it)
  const char* aliases[4];  // the other names users write ("cuda", "CUDA", ...); nullptr-terminated
  uint32_t vendor_id;      // PCI vendor id of the memory it owns; 0 when ORT reports its memory with vendor 0
  MemoryRow memory[2];     // the memory it owns ({nullptr} ends the list); none: it uses another row's memory
  // Where its library comes from (neither: built into every ORT, never registered). Both may be set: an ORT
  // distribution ships it (onnxruntime-openvino) and so does an EP package of its own (onnxruntime-ep-openvino).
  const char* ort_library;  // the library's file name in the running ORT's folder, or nullptr
  const char* packages[4];  // installed Python distributions that bring it, nullptr-terminated; an onnxruntime-ep-*
                            // package declaring its EP name is found too
  const char* install;      // what a user installs to get it
  const char* device_hint;  // why its library may bring no device (what the EP needs), or nullptr
  StreamBackend streams;
  const char* compute_stream_option;  // the provider option naming a caller's compute stream, or nullptr
  bool zero_is_default_stream;        // stream handle 0 names the device's default stream (CUDA: ORT then uses its own)
  OptionDefault option_default;       // a provider option it cannot do without, defaulted
  // The provider option that makes its sessions capture device graphs and replay them ("1" or "true"), or nullptr.
  const char* graph_capture_option;
};

// Every row, in table order. Memory may be owned by several rows (NVIDIA memory: the CUDA EP's and the TensorRT RTX
// EP's); their libraries are tried in table order when the env has no EP serving that memory.
struct EpTable {
  const EpRow* begin() const noexcept;
  const EpRow* end() const noexcept;
};
inline EpTable ep_table() { return {}; }

// The row of an EP by its ORT name or an alias; nullptr for an EP the table does not know.
const EpRow* find_ep(const std::string& name);

// The first row (and its memory row) owning memory with these fields; nullptr when no row does. The memory of an
// EP identified by name (vendor 0 in its row, e.g. WebGPU's buffers) is its own whatever vendor ORT reports; other
// memory is matched by vendor, whatever its name, and by name only when ORT reports vendor 0 (older ORT builds).
const EpRow* owner_of(const MemoryFields& memory, const MemoryRow** row = nullptr);

// The row and memory row that own DLPack device type `type` (the reverse of owner_of); nullptr when none.
const EpRow* owner_of(DLDeviceType type, const MemoryRow** row);

// Whether `ep` owns `memory` (the rule of owner_of, for one row).
bool owns(const EpRow& ep, const MemoryFields& memory);

}  // namespace ortdlpack::detail
