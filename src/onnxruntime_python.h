// Internal, for the Python front end: what the core knows of onnxruntime's Python API, which the front end adapts to
// and cannot change — the names its Python gives devices, the tensors its OrtValue.from_dlpack reads correctly, the
// OrtEpDevice behind its Python OrtEpDevice, and the OrtSession behind its InferenceSession, recognised before it is
// used. Plain C++ (no Python): tests/cpp/test_onnxruntime_python.cc tests each rule.
#pragma once

#include <dlpack/dlpack.h>
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <string>

#include "ortdlpack/error.h"

namespace ortdlpack {

/// \brief The device name onnxruntime's Python API uses for memory of that DLPack type ("cpu" for host memory,
/// "cuda" for CUDA and ROCm memory); nullptr when onnxruntime has none.
const char* onnxruntime_device_name(DLDeviceType type);

/// \brief Whether onnxruntime's Python OrtValue.from_dlpack wraps memory of that type (CPU, CUDA, ROCm: the only
/// public way to make an onnxruntime.OrtValue over foreign memory).
bool onnxruntime_wraps(DLDeviceType type);

/// \brief Whether onnxruntime's own OrtValue.from_dlpack reads `t` (with versioned `flags`) correctly as it is: what
/// the core's import holds in place (imports_in_place), with byte_offset 0 (onnxruntime ignores it), writable, of a
/// whole-byte element type ONNX has, in memory it wraps. Such a tensor is handed to it without an import of
/// ortdlpack's own. Never throws: a malformed tensor is not plain (importing it says why).
bool is_plain(const DLTensor& t, uint64_t flags = 0) noexcept;

/// \brief The EP device of the env with that EP name and hardware device (type, vendor id, device id): the
/// OrtEpDevice behind an onnxruntime.OrtEpDevice, which exposes no pointer. Error(kInvalidArgument) when the env has
/// none.
const OrtEpDevice* find_ep_device(const std::string& ep_name, int64_t hardware_type, int64_t vendor_id,
                                  int64_t device_id);

/// \brief What every OrtSession of the running ORT starts with in memory (ORT's session class is polymorphic: the
/// address of its vtable), read once from a session made for the purpose: session_at recognises a session
/// onnxruntime's Python created by it, and never takes anything else for a session.
const void* session_vtable();

/// \brief Whether onnxruntime's Python run takes output names as any iterable (a generator) and feeds as any mapping
/// (a mappingproxy): its binding from 1.24 on (pybind11 3's casters); 1.23's takes a sequence and a dict only, and
/// raises TypeError for the others (measured on every release, scripts/compat_table.py).
bool onnxruntime_takes_iterables();

/// \brief Why the OrtSession behind an InferenceSession's C session could not be reached, or kReached.
enum class Borrow { kReached, kNoConduit, kUnreadable, kNotASession };
struct BorrowedPointer {
  OrtSession* session = nullptr;
  Borrow status = Borrow::kNoConduit;
};
/// \brief The OrtSession at the first member of onnxruntime's SessionIOBinding (at `first`), or why not: every word
/// is probed before it is read (readable_word), and the object it points to must start with the vtable of ORT's
/// session class (session_vtable), which nothing but a session of this ORT does.
BorrowedPointer session_at(const void* const* first);
/// \brief Whether the aligned word at `p` can be read, asked of the kernel (a write of it into a pipe fails with
/// EFAULT), so that no address can fault, PROT_NONE pages included: the probe before every read of onnxruntime's
/// private layout.
bool readable_word(const void* p) noexcept;
/// \brief The bytes of an ONNX model (ModelProto, IR 8, opset 17: one Identity node on float32[1]), written without
/// the onnx package: what show_config makes an InferenceSession of to tell whether the borrow reaches it.
std::string borrow_probe_model();
/// \brief What a Borrow says, for messages and show_config.
const char* borrow_reason(Borrow status);

/// \brief How onnxruntime's Python binding raises ORT error `code` (onnxruntime_pybind_exceptions.cc): the name its
/// messages give the code (Status::ToString: "INVALID_ARGUMENT", "GENERAL ERROR" for a code it does not know:
/// onnxruntime_message) and its exception class in onnxruntime.capi.onnxruntime_pybind11_state ("InvalidArgument";
/// nullptr: RuntimeError, as for MODEL_LOADED and codes it does not know). kOnnxruntimeErrors is indexed by code.
struct OnnxruntimeError {
  OrtErrorCode code;
  const char* status_name;
  const char* class_name;
};
extern const OnnxruntimeError kOnnxruntimeErrors[16];
/// \brief The message onnxruntime's Python raises an ORT error (ort_code() not ORT_OK) with: "[ONNXRuntimeError] :
/// <code> : <NAME> : <ORT's message>".
std::string onnxruntime_message(const Error& e);

}  // namespace ortdlpack
