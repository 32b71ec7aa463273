// ortdlpack.show_config() (python/ortdlpack/_config.py): what the core says about one EP device of the env, for a
// bug report. Every fact is the core's: the memory the EP device declares (device.h describe_memory), the DLPack
// device that memory is exported as (to_dlpack_device, or why none) and whether ortdlpack orders work there with a
// stream (stream.h device_stream: NULL without one).
#include <optional>
#include <string>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "devices.h"
#include "registrations.h"

namespace ortdlpack::py {
namespace {

// (memory type, how the core names the memory, its DLPack device or None, why it has none or None) of one memory
// the EP device declares; None when it declares none of that type.
nb::object memory_config(const OrtEpDevice* device, OrtDeviceMemoryType type, const char* type_name) {
  const OrtMemoryInfo* memory = ort().EpDevice_MemoryInfo(device, type);
  if (memory == nullptr) return nb::none();
  std::optional<std::string> dlpack, why;
  try {
    dlpack = name_of(to_dlpack_device(memory));
  } catch (const Error& e) {
    why = e.what();
  }
  return nb::make_tuple(type_name, describe_memory(memory), dlpack, why);
}

}  // namespace

void define_config(nb::module_& m) {
  m.def(
      "_ep_device_config",
      [](nb::handle ep_device) {
        const OrtEpDevice* device = ep_device_of(ep_device);
        nb::list memories;
        for (nb::object row : {memory_config(device, OrtDeviceMemoryType_DEFAULT, "default"),
                               memory_config(device, OrtDeviceMemoryType_HOST_ACCESSIBLE, "host_accessible")}) {
          if (!row.is_none()) memories.append(row);
        }
        const OrtMemoryInfo* memory = ort().EpDevice_MemoryInfo(device, OrtDeviceMemoryType_DEFAULT);
        const bool streams = memory != nullptr && device_stream(memory) != nullptr;
        return nb::make_tuple(memories, streams);
      },
      nb::arg("ep_device"),
      nb::sig("def _ep_device_config(ep_device: onnxruntime.OrtEpDevice) -> "
              "tuple[list[tuple[str, str, str | None, str | None]], bool]"),
      "For show_config(): ([(memory type, memory, DLPack device or None, why none or None)], whether ortdlpack "
      "orders work on this device with a stream). An EP device using plain host memory declares no memory.");
}

}  // namespace ortdlpack::py
