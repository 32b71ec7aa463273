// ortdlpack.Device and device arguments (devices.cc): the core's Target (placement.h), of kind kDevice (a DLPack
// device) or kMemory (the exact memory of an EP device), is the one "where" type from the core to the extension.
#pragma once

#include <climits>

#include "extension.h"

namespace ortdlpack::py {

// Accepts a Device, "cpu", "cuda:0", a (dl_device_type, id) tuple and an onnxruntime.OrtEpDevice. TypeError for
// other types, ValueError for unknown names and out-of-range values, both naming the argument `what`.
Target to_device(nb::handle spec, const char* what);
// A device argument that may be None: None -> Target::anywhere(), else to_device.
Target to_target(nb::handle spec, const char* what);
// The DLPack device a Device names (an EP device's: its memory's).
DLDevice dl_device_of(const Target& device);
// The env's OrtEpDevice behind an onnxruntime.OrtEpDevice (which exposes no pointer), found again by the core.
const OrtEpDevice* ep_device_of(nb::handle ep);
// An integer argument (anything with __index__): TypeError for other types, ValueError outside [min, max], both
// naming the argument `what`.
long long to_integer(nb::handle h, const char* what, long long min = INT64_MIN, long long max = INT64_MAX);
nb::object make_device(DLDevice dl);

}  // namespace ortdlpack::py
