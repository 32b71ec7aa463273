// EP libraries shipped with ORT: found only in ORT's own folder (or a folder the caller names), registered once,
// with errors that say what to install. The SDK the tests run on has no GPU EP, so the CUDA rows are exercised
// through their failure paths; the registration path itself through a caller-named folder holding a library.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ep_library.h"
#include "ep_packages.h"
#include "ortdlpack/ortdlpack.h"
#include "support.h"

namespace fs = std::filesystem;
using namespace ortdlpack;
using detail::ships_with_ort;
using ortdlpack::select_ep_devices;

namespace {

std::string maps() {
  std::ifstream in("/proc/self/maps");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path temp_dir(const char* tag) {
  fs::path d = fs::temp_directory_path() / (std::string("ortdlpack_ep_") + tag + "_" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

std::string error_of(void (*f)()) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(EpLibrary, DirIsTheRunningOrtLibrarysFolder) {
  EXPECT_EQ(fs::canonical(ep_library_dir()), fs::canonical(ORTDLPACK_TEST_ORT_LIB_DIR));
}

TEST(EpLibrary, NamesUsersWriteMapToOrtsEpNames) {
  EXPECT_EQ(canonical_ep_name("cuda"), "CUDAExecutionProvider");
  EXPECT_EQ(canonical_ep_name("CUDA"), "CUDAExecutionProvider");
  EXPECT_EQ(canonical_ep_name("CUDAExecutionProvider"), "CUDAExecutionProvider");
  EXPECT_EQ(canonical_ep_name("trt"), "TensorrtExecutionProvider");
  EXPECT_EQ(canonical_ep_name("migraphx"), "MIGraphXExecutionProvider");
  EXPECT_EQ(canonical_ep_name("openvino"), "OpenVINOExecutionProvider");
  EXPECT_EQ(canonical_ep_name("SomePluginEP"), "SomePluginEP");
  EXPECT_TRUE(ships_with_ort("cuda"));
  EXPECT_TRUE(ships_with_ort("OpenVINOExecutionProvider"));
  EXPECT_FALSE(ships_with_ort("CPUExecutionProvider"));
  EXPECT_FALSE(ships_with_ort("SomePluginEP"));
}

TEST(EpLibrary, MissingCudaLibrarySaysWhatToInstall) {
  try {
    ensure_ep("cuda");
    FAIL() << "this SDK has no CUDA EP library";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    const std::string m = e.what();
    EXPECT_NE(m.find("libonnxruntime_providers_cuda.so"), std::string::npos) << m;
    EXPECT_NE(m.find("pip install onnxruntime-gpu"), std::string::npos) << m;
    EXPECT_NE(m.find(ep_library_dir()), std::string::npos) << m;
  }
}

TEST(EpLibrary, UnknownEpNameListsWhatTheEnvHas) {
  try {
    ensure_ep("NoSuchEP");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'NoSuchEP'"), std::string::npos) << e.what();
  }
}

TEST(EpLibrary, CudaAllocationWithoutTheEpIsAClearError) {
  try {
    allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, DLDevice{kDLCUDA, 0});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("onnxruntime-gpu"), std::string::npos) << e.what();
  }
  // Pinned memory belongs to the same EP.
  EXPECT_NE(error_of([] {
              allocate(ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, {4}, DLDevice{kDLCUDAHost, 0});
            }).find("libonnxruntime_providers_cuda.so"),
            std::string::npos);
}

TEST(EpLibrary, DecoysInTheWorkingDirectoryAndLibraryPathAreNeverLoaded) {
  const fs::path decoy = temp_dir("decoy");
  // TensorRT: a row no other test tries (a library is tried once per process, and sanitize.sh runs every test of
  // this binary in one process).
  fs::copy_file(ORTDLPACK_VD_PATH, decoy / "libonnxruntime_providers_tensorrt.so",
                fs::copy_options::overwrite_existing);
  const fs::path cwd = fs::current_path();
  fs::current_path(decoy);
  setenv("LD_LIBRARY_PATH", decoy.c_str(), 1);
  const std::string m = error_of([] { ensure_ep("trt"); });
  fs::current_path(cwd);
  EXPECT_NE(m.find("has no libonnxruntime_providers_tensorrt.so"), std::string::npos) << m;
  EXPECT_EQ(maps().find(decoy.string()), std::string::npos) << "a decoy library was loaded";
  fs::remove_all(decoy);
}

TEST(EpLibrary, CallerNamedFolderIsUsedOnceAndTheEpIsChecked) {
  EXPECT_THROW(set_ep_library_dir("relative/dir"), Error);
  const fs::path dir = temp_dir("named");
  // A library that registers, but brings another EP than the file name promises: refused, and not retried. OpenVINO:
  // a row no other test tries (one process may run them all).
  fs::copy_file(ORTDLPACK_VD_PATH, dir / "libonnxruntime_providers_openvino.so", fs::copy_options::overwrite_existing);
  set_ep_library_dir(dir.string());
  const std::string first = error_of([] { ensure_ep("OpenVINOExecutionProvider"); });
  EXPECT_NE(first.find("brought no 'OpenVINOExecutionProvider'"), std::string::npos) << first;
  EXPECT_NE(maps().find(dir.string()), std::string::npos) << "the library in the named folder was not loaded";
  EXPECT_EQ(error_of([] { ensure_ep("openvino"); }), first);
  // The EP it did bring is in the env now, under its own name.
  EXPECT_EQ(ensure_ep("VirtualDeviceEP"), "VirtualDeviceEP");
  EXPECT_FALSE(select_ep_devices("VirtualDeviceEP", {}).empty());
  EXPECT_EQ(select_ep_devices("VirtualDeviceEP", {{"device_id", "1"}}).size(), 1u);
  try {
    select_ep_devices("VirtualDeviceEP", {{"device_id", "7"}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
  set_ep_library_dir("");
  EXPECT_EQ(fs::canonical(ep_library_dir()), fs::canonical(ORTDLPACK_TEST_ORT_LIB_DIR));
}

// --- EP packages (onnxruntime-ep-*), as a binding's finder reports them (ep_packages.h) ---------------------

namespace {

std::vector<EpPackage> g_packages;  // what the test finder reports
std::vector<EpPackage> test_finder(const std::string& distribution) {
  std::vector<EpPackage> found;
  for (const EpPackage& p : g_packages) {
    if (distribution.empty() || p.distribution == distribution) found.push_back(p);
  }
  return found;
}

// A package folder holding a copy of the virtual device library (a real EP library, found as a package's).
EpPackage package(const char* tag, const char* distribution, std::vector<std::string> ep_names) {
  const fs::path dir = temp_dir(tag);
  fs::copy_file(ORTDLPACK_VD_PATH, dir / "libplugin.so", fs::copy_options::overwrite_existing);
  return {distribution, "1.0", dir.string(), (dir / "libplugin.so").string(), std::move(ep_names)};
}

struct Finder {
  explicit Finder(std::vector<EpPackage> packages) {
    g_packages = std::move(packages);
    set_ep_package_finder(&test_finder);
  }
  ~Finder() {
    set_ep_package_finder(nullptr);
    g_packages.clear();
  }
};

}  // namespace

TEST(EpLibrary, AnEmptyNameIsRefused) {
  EXPECT_EQ(test::kind_of([] { ensure_ep(""); }), ErrorKind::kInvalidArgument);
}

TEST(EpLibrary, TheCpuEpIsBuiltIn) {
  EXPECT_EQ(ensure_ep("cpu"), "CPUExecutionProvider");
  EXPECT_EQ(ensure_ep("CPUExecutionProvider"), "CPUExecutionProvider");
}

TEST(EpLibrary, AMissingPackageSaysWhatToInstall) {
  const Finder none({});
  const std::string m = error_of([] { ensure_ep("mlx"); });
  EXPECT_NE(m.find("no installed onnxruntime-ep-mlx"), std::string::npos) << m;
  EXPECT_NE(m.find("pip install onnxruntime-ep-mlx"), std::string::npos) << m;
}

TEST(EpLibrary, APackagesLibraryMustBeAFileOfItsOwnFolder) {
  EpPackage outside = package("outside", "onnxruntime-ep-webgpu", {"WebGpuExecutionProvider"});
  const std::string real = outside.library;
  outside.folder = temp_dir("elsewhere").string();
  EpPackage dotted = outside;
  dotted.library = dotted.folder + "/../" + fs::path(real).parent_path().filename().string() + "/libplugin.so";
  const Finder finder({outside, dotted});
  const std::string m = error_of([] { ensure_ep("webgpu"); });
  EXPECT_NE(m.find("is not a file of its own folder"), std::string::npos) << m;
  EXPECT_EQ(maps().find(real), std::string::npos) << "a library outside its package was loaded";
}

TEST(EpLibrary, APackageMustBringTheEpItIsInstalledFor) {
  const Finder finder({package("wrong_ep", "onnxruntime-ep-nv-tensorrt-rtx-cu13", {"VirtualDeviceEP"})});
  const std::string m = error_of([] { ensure_ep("tensorrt_rtx"); });
  EXPECT_NE(m.find("registers no 'NvTensorRTRTXExecutionProvider'"), std::string::npos) << m;
}

TEST(EpLibrary, AnEpNoRowKnowsIsFoundAsThePackageNamedForIt) {
  const EpPackage p = package("named", "onnxruntime-ep-virtual-device", {"VirtualDeviceEP"});
  const Finder finder({p});
  EXPECT_EQ(ensure_ep("virtual_device"), "VirtualDeviceEP");  // onnxruntime-ep-virtual-device, by its EP's name
  EXPECT_FALSE(select_ep_devices("VirtualDeviceEP", {}).empty());
  EXPECT_EQ(test::kind_of([] { ensure_ep("no_such_thing"); }), ErrorKind::kInvalidArgument);
}

TEST(EpLibrary, APackageWhoseLibraryBringsNoDeviceSaysWhatTheEpNeedsNotWhatToInstall) {
  // A library that registers but lists no device of the EP it is installed for (the WebGPU EP without an adapter).
  const Finder finder({package("no_device", "onnxruntime-ep-webgpu", {"WebGpuExecutionProvider"})});
  const std::string m = error_of([] { ensure_ep("webgpu"); });
  EXPECT_NE(m.find("brought no 'WebGpuExecutionProvider' device"), std::string::npos) << m;
  EXPECT_NE(m.find("ORT_WEBGPU_EP_ALLOW_SOFTWARE_ADAPTER"), std::string::npos) << m;
  EXPECT_EQ(m.find("pip install"), std::string::npos) << "the package is installed: " << m;
}
