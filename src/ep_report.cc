// What ortdlpack makes of the env's EP devices, for a bug report (ep.h describe_ep_devices; ortdlpack.show_config).
// Every fact is the core's: the memory an EP device declares (describe_memory), the DLPack device that memory is
// exported as (to_dlpack_device, or why none) and whether ortdlpack orders work there with a stream (device_stream).
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "ort.h"
#include "ortdlpack/device.h"
#include "ortdlpack/ep.h"
#include "ortdlpack/error.h"
#include "ortdlpack/stream.h"

namespace ortdlpack {
namespace {

const char* hardware_type_name(OrtHardwareDeviceType type) {
  switch (type) {
    case OrtHardwareDeviceType_CPU:
      return "CPU";
    case OrtHardwareDeviceType_GPU:
      return "GPU";
    case OrtHardwareDeviceType_NPU:
      return "NPU";
  }
  return "an unknown hardware type";
}

// "    <kind> memory: <memory> -> DLPack <device>" (or "-> no DLPack device (<why>)") for each memory `device`
// declares; an EP device on plain host memory declares none.
void add_memory_lines(const OrtEpDevice* device, std::vector<std::string>& lines) {
  const std::pair<OrtDeviceMemoryType, const char*> kinds[] = {
      {OrtDeviceMemoryType_DEFAULT, "default"}, {OrtDeviceMemoryType_HOST_ACCESSIBLE, "host_accessible"}};
  bool any = false;
  for (const auto& [type, kind] : kinds) {
    const OrtMemoryInfo* memory = ort().EpDevice_MemoryInfo(device, type);
    if (memory == nullptr) continue;
    any = true;
    std::string line = std::string("    ") + kind + " memory: " + describe_memory(memory) + " -> ";
    try {
      line += "DLPack " + name_of(to_dlpack_device(memory));
    } catch (const Error& e) {
      line += std::string("no DLPack device (") + e.what() + ")";
    }
    lines.push_back(line);
  }
  if (!any) lines.emplace_back("    memory: host memory (DLPack cpu)");
  const OrtMemoryInfo* memory = detail::default_memory(device);
  const bool streams = memory != nullptr && device_stream(memory) != nullptr;
  lines.push_back(std::string("    streams ortdlpack can order: ") + (streams ? "yes" : "no (copies are synchronous)"));
}

}  // namespace

std::vector<std::string> describe_ep_devices() {
  const detail::EpDeviceList devices = detail::env_ep_devices();
  std::vector<std::string> lines{"EP devices of the environment: " + std::to_string(devices.size())};
  for (const OrtEpDevice* d : devices) {
    const OrtHardwareDevice* hw = ort().EpDevice_Device(d);
    char vendor_id[16];
    std::snprintf(vendor_id, sizeof vendor_id, "0x%04x", ort().HardwareDevice_VendorId(hw));
    lines.push_back(std::string("  ") + ort().EpDevice_EpName(d) + " (" + ort().EpDevice_EpVendor(d) + ") on " +
                    hardware_type_name(ort().HardwareDevice_Type(hw)) + " " + ort().HardwareDevice_Vendor(hw) +
                    " (vendor id " + vendor_id + ", device " + std::to_string(ort().HardwareDevice_DeviceId(hw)) + ")");
    try {
      add_memory_lines(d, lines);
    } catch (const Error& e) {  // one device the core cannot read: said, the others reported
      lines.push_back(std::string("    not readable by ortdlpack: ") + e.what());
    }
  }
  return lines;
}

}  // namespace ortdlpack
