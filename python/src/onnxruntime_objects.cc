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
#include <cstdint>
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
