// What the binding asks of a producer's type: a class attribute (the DLPack exchange table, requires_grad) and the
// module that defines it, without keeping the type alive — proxy and wrapper libraries make a class per call, and
// a cache keyed by such types would hold every one of them. The one place that knows the full C API from the
// limited API of the stable-ABI (abi3) build.
#include <mutex>
#include <string>
#include <unordered_map>

#include <nanobind/stl/string.h>

#include "extension.h"
#include "tensors.h"

namespace ortdlpack::py {
namespace {

bool is_static(PyTypeObject* type) { return (PyType_GetFlags(type) & Py_TPFLAGS_HEAPTYPE) == 0; }

}  // namespace

std::string package_of(PyTypeObject* type) {
  static PyObject* const name = PyUnicode_InternFromString("__module__");  // process lifetime
  nb::object module = nb::steal(PyObject_GetAttr(reinterpret_cast<PyObject*>(type), name));
  if (!module.is_valid() || !PyUnicode_Check(module.ptr())) {
    clear_exception();
    return "";
  }
  const std::string m = nb::cast<std::string>(module);
  return m.substr(0, m.find('.'));
}

PyObject* class_attribute(PyTypeObject* type, PyObject* name) {
#if defined(Py_LIMITED_API)
  // The limited API has no lookup that misses without an exception; static types (which live for the process,
  // numpy.ndarray among them) keep their answer so that the common miss is paid once.
  static std::unordered_map<PyTypeObject*, std::unordered_map<PyObject*, PyObject*>> statics;  // under the GIL
  const bool keep = is_static(type);
  if (keep) {
    auto t = statics.find(type);
    if (t != statics.end()) {
      auto a = t->second.find(name);
      if (a != t->second.end()) return a->second;
    }
  }
  PyObject* value = PyObject_GetAttr(reinterpret_cast<PyObject*>(type), name);
  if (value == nullptr) {
    clear_exception();
  } else {
    Py_DECREF(value);  // borrowed from here on: the type's own dict (or a base's) holds it while the type lives
  }
  if (keep) statics[type][name] = value;
  return value;
#else
  return _PyType_Lookup(type, name);  // CPython's type attribute cache; a miss raises nothing, no reference taken
#endif
}

Framework framework_of_type(PyTypeObject* type) {
  // Kept for static types (they live for the process) and by C exchange API table (a framework's tables are static
  // data of its library, which is not unloaded: torch.Tensor, a heap type, is found without reading its module). GIL.
  static std::unordered_map<const void*, Framework> known;
  const void* key = is_static(type) ? static_cast<const void*>(type) : exchange_api_of(type);
  if (key != nullptr) {
    auto it = known.find(key);
    if (it != known.end()) return it->second;
  }
  const Framework f = framework_of_package(package_of(type));
  if (key != nullptr) known.emplace(key, f);
  return f;
}

PyObject* module_attribute(const char* module, const char* name) {
  return nb::object(nb::module_::import_(module).attr(name)).release().ptr();  // kept: process lifetime
}

PyTypeObject* module_type(const char* module, const char* name) {
  return reinterpret_cast<PyTypeObject*>(module_attribute(module, name));
}

}  // namespace ortdlpack::py
