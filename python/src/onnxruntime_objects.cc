// onnxruntime's Python SessionOptions, RunOptions and InferenceSession as the ORT structs they wrap: ortdlpack.Session
// honours every setting a user made on the options, whatever call made it and whether or not onnxruntime's Python can
// report it (free dimension overrides, config entries, initializers and custom op libraries have no getter; the core
// starts from a copy of the options, SessionConfig::base); and the core's Session runs a user's InferenceSession's
// own OrtSession (run.cc), with the one executor every ortdlpack run goes through.
//
// onnxruntime.SessionOptions wraps onnxruntime::python::PySessionOptions, whose first and only base is ORT's
// OrtSessionOptions; onnxruntime.RunOptions wraps OrtRunOptions itself; an IOBinding of an InferenceSession's C
// session (its `_sess`) wraps onnxruntime::SessionIOBinding, which holds the InferenceSession ORT's C API calls
// OrtSession.
// onnxruntime binds them with pybind11, whose cross-binding conduit (`_pybind11_conduit_v1_`, pybind11 >= 2.13:
// onnxruntime 1.23 and later) hands the C++ pointer to a caller that names pybind11's platform ABI and the C++ type.
// The type is named by its mangled name, which is what pybind11 compares (the Itanium C++ ABI's type_info equality);
// the ABI ids are those of the pybind11 builds in this process, read from the keys of their internals. What the conduit
// refuses (another ABI, another type) gives NULL, never a wrong pointer.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

#include <cstdint>
#include <cstring>
#include <string>
#include <typeinfo>
#include <vector>

#include "onnxruntime_objects.h"

namespace ortdlpack::py {
namespace {

// A std::type_info naming a C++ type of onnxruntime's by its mangled name.
struct ForeignType : std::type_info {
  explicit ForeignType(const char* mangled) : std::type_info(mangled) {}
};

const ForeignType kPySessionOptions("N11onnxruntime6python16PySessionOptionsE");
const ForeignType kOrtRunOptions("13OrtRunOptions");
const ForeignType kSessionIOBinding("N11onnxruntime16SessionIOBindingE");

// pybind11 keeps its internals under "__pybind11_internals_v<N><id>__" (2.x: the id starts with '_') or
// "__pybind11_internals_v<N>_<id>__" (3.x) in the interpreter's state dict (or builtins, before 2.10).
void add_abi_ids(PyObject* dict, std::vector<std::string>& ids) {
  if (dict == nullptr) return;
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  Py_ssize_t pos = 0;
  constexpr const char kPrefix[] = "__pybind11_internals_v";
  while (PyDict_Next(dict, &pos, &key, &value)) {
    if (!PyUnicode_Check(key)) continue;
    const char* k = PyUnicode_AsUTF8AndSize(key, nullptr);
    if (k == nullptr) {
      clear_exception();
      continue;
    }
    std::string s(k);
    if (s.compare(0, sizeof(kPrefix) - 1, kPrefix) != 0 || s.size() < sizeof(kPrefix) + 2) continue;
    size_t i = sizeof(kPrefix) - 1;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;  // the internals version
    if (s.compare(s.size() - 2, 2, "__") != 0 || i >= s.size() - 2) continue;
    const std::string id = s.substr(i, s.size() - 2 - i);
    ids.push_back(id);
    if (id[0] == '_') ids.push_back(id.substr(1));
  }
}

std::vector<std::string> abi_ids() {
  std::vector<std::string> ids;
  add_abi_ids(PyInterpreterState_GetDict(PyInterpreterState_Get()), ids);
  add_abi_ids(PyEval_GetBuiltins(), ids);
  return ids;
}

// The C++ object of type `type` behind `obj`, or NULL.
void* conduit(nb::handle obj, const std::type_info& type) {
  PyObject* method = PyObject_GetAttrString(obj.ptr(), "_pybind11_conduit_v1_");
  if (method == nullptr) {
    clear_exception();
    return nullptr;
  }
  const nb::object call = nb::steal(method);
  const nb::capsule info(static_cast<const void*>(&type), typeid(std::type_info).name());
  const nb::bytes kind("raw_pointer_ephemeral");
  const auto ask = [&](const std::string& id) -> void* {
    const nb::object r = call(nb::bytes(id.data(), id.size()), info, kind);
    if (!PyCapsule_CheckExact(r.ptr())) return nullptr;
    void* p = PyCapsule_GetPointer(r.ptr(), PyCapsule_GetName(r.ptr()));
    if (p == nullptr) clear_exception();
    return p;
  };
  static std::string known;  // the id that answered last (under the GIL)
  if (!known.empty()) {
    if (void* p = ask(known)) return p;
  }
  for (const std::string& id : abi_ids()) {
    if (void* p = ask(id)) {
      known = id;
      return p;
    }
  }
  return nullptr;
}

}  // namespace

bool is_session_options(nb::handle x) {
  static PyTypeObject* const type = module_type("onnxruntime", "SessionOptions");
  return PyObject_TypeCheck(x.ptr(), type) != 0;
}

bool is_run_options(nb::handle x) {
  static PyTypeObject* const type = module_type("onnxruntime", "RunOptions");
  return PyObject_TypeCheck(x.ptr(), type) != 0;
}

bool readable_word(const void* p) noexcept {
  const auto address = reinterpret_cast<uintptr_t>(p);
  if (address == 0 || address % alignof(void*) != 0) return false;
  // The kernel copies the word into a pipe of the process's own, or fails with EFAULT for an address the process
  // cannot read (unmapped, PROT_NONE): the copy is the kernel's, so no signal reaches the process. The word is read
  // back at once, under a lock: the pipe never fills.
  static int fds[2] = {-1, -1};
  static std::mutex mutex;
  const std::lock_guard<std::mutex> lock(mutex);
  if (fds[0] < 0 && pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return false;
  ssize_t written = 0;
  do {
    written = write(fds[1], p, sizeof(void*));
  } while (written < 0 && errno == EINTR);
  if (written != static_cast<ssize_t>(sizeof(void*))) return false;
  void* word = nullptr;
  return read(fds[0], &word, sizeof(word)) == static_cast<ssize_t>(sizeof(word));
}

const char* borrow_reason(Borrow status) {
  switch (status) {
    case Borrow::kReached:
      return "reached";
    case Borrow::kNoConduit:
      return "no SessionIOBinding of its C session through pybind11's conduit";
    case Borrow::kUnreadable:
      return "the SessionIOBinding's first word cannot be read";
    case Borrow::kNotASession:
      return "the SessionIOBinding's first member is not an ORT session (its vtable is not ORT's session class's)";
  }
  return "unknown";
}

const OrtSessionOptions* onnxruntime_session_options(nb::handle options, const char* what, const char* hint) {
  // PySessionOptions' first and only base is OrtSessionOptions: the same address.
  const auto* o = static_cast<const OrtSessionOptions*>(conduit(options, kPySessionOptions));
  if (o == nullptr) {
    throw nb::value_error((std::string(what) +
                           ": this onnxruntime does not hand out the ORT options behind its SessionOptions (pybind11's "
                           "conduit)" +
                           hint)
                              .c_str());
  }
  return o;
}

BorrowedPointer onnxruntime_session(nb::handle c_session) {
  // onnxruntime's SessionIOBinding, made for this C session, holds the session's InferenceSession (ORT's C API's
  // OrtSession) as its first member; its PyInferenceSession holds it among members whose layout changes between
  // versions. The pointer is taken from the binding, then recognised: it must point to an object starting with the
  // vtable of ORT's session class, which nothing but a session of this ORT does. Every word is probed before it is
  // read.
  static PyObject* const io_binding =
      module_attribute("onnxruntime.capi.onnxruntime_pybind11_state", "SessionIOBinding");
  PyObject* made = PyObject_CallFunctionObjArgs(io_binding, c_session.ptr(), nullptr);  // (limited API: abi3)
  if (made == nullptr) {
    clear_exception();
    return {nullptr, Borrow::kNoConduit};
  }
  const nb::object binding = nb::steal(made);
  const auto* first = static_cast<const void* const*>(conduit(binding, kSessionIOBinding));
  if (first == nullptr) return {nullptr, Borrow::kNoConduit};
  return session_at(first);
}

BorrowedPointer session_at(const void* const* first) {
  if (!readable_word(first)) return {nullptr, Borrow::kUnreadable};
  const void* session = *first;
  if (!readable_word(session)) return {nullptr, Borrow::kUnreadable};
  if (*static_cast<const void* const*>(session) != session_vtable()) return {nullptr, Borrow::kNotASession};
  return {static_cast<OrtSession*>(const_cast<void*>(session)), Borrow::kReached};
}

const OrtRunOptions* onnxruntime_run_options(nb::handle options, const char* what) {
  const auto* o = static_cast<const OrtRunOptions*>(conduit(options, kOrtRunOptions));
  if (o == nullptr) {
    throw nb::value_error((std::string(what) +
                           ": this onnxruntime does not hand out the ORT options behind its RunOptions (pybind11's "
                           "conduit)")
                              .c_str());
  }
  return o;
}

}  // namespace ortdlpack::py
