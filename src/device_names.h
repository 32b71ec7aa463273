// Internal: ORT's device types and memory types by the names a binding spells them ("cpu", "gpu", "fpga", "npu";
// "default", "host_accessible": the table describe_memory() prints, device.h) and by the enums' values (what
// onnxruntime's Python enums hold). The DLPack device names are public (device.h).
#pragma once

#include <onnxruntime_c_api.h>

#include <string>

namespace ortdlpack {

// The ORT device type or memory type named `name`; Error(kInvalidArgument) listing the names for an unknown one.
OrtMemoryInfoDeviceType ort_device_type_from_name(const std::string& name);
OrtDeviceMemoryType memory_type_from_name(const std::string& name);

// The same from the enums' values; Error(kInvalidArgument) listing the values for a value that is not one.
OrtMemoryInfoDeviceType ort_device_type_from_value(long long value);
OrtDeviceMemoryType memory_type_from_value(long long value);

}  // namespace ortdlpack
