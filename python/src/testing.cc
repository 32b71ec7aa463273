// ortdlpack._ortdlpack._testing: entry points for the tests, benchmarks and fuzz harnesses of this repository, built
// only with ORTDLPACK_PYTHON_TESTING=ON (scripts/setup.sh's build; wheels have none). Each reaches code the package
// runs, with no other way in from Python: the core's provider resolution as the session paths use it, a legacy
// capsule of a Tensor as as_ortvalue hands to onnxruntime, and the C exchange APIs of two types end to end.
#include <map>
#include <optional>
#include <string>

#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>

#include "registrations.h"
#include "tensors.h"

namespace ortdlpack::py {

void define_testing(nb::module_& m) {
  m.def(
      "resolve_provider",
      [](const std::string& name) {
        nb::gil_scoped_release release;  // registering an EP library asks the package finder, which takes the GIL
        return ortdlpack::resolve_provider(name);
      },
      nb::arg("name"), nb::sig("def resolve_provider(name: str) -> str | None"),
      "ortdlpack::resolve_provider (ep.h): the EP's name in ONNX Runtime for a provider name users write, an EP an "
      "installed package brings registered first. None for a name that is no EP ortdlpack knows.");
  m.def(
      "provider_options",
      [](const std::string& ep_name, const std::map<std::string, std::string>& options) {
        const auto all = ortdlpack::provider_options(ep_name, {options.begin(), options.end()});
        return std::map<std::string, std::string>(all.begin(), all.end());
      },
      nb::arg("ep_name"), nb::arg("options"),
      nb::sig("def provider_options(ep_name: str, options: dict[str, str]) -> dict[str, str]"),
      "ortdlpack::provider_options (ep.h): a session's options on EP `ep_name` with the defaults ortdlpack adds.");
  m.def(
      "legacy_capsule", [](nb::handle t) { return legacy_capsule_over(to_dlpack_versioned(tensor_of(t).tensor)); },
      nb::arg("tensor"),
      "A legacy 'dltensor' capsule of a Tensor, as legacy-only consumers get one (read-only and sub-byte tensors "
      "too).");
  m.def(
      "exchange",
      [](nb::handle x, nb::handle to_type) -> nb::object {
        if (!PyType_Check(to_type.ptr())) throw nb::type_error("to_type must be a type");
        const DLPackExchangeAPI* src = exchange_api_of(Py_TYPE(x.ptr()));
        const DLPackExchangeAPI* dst = exchange_api_of(reinterpret_cast<PyTypeObject*>(to_type.ptr()));
        if (src == nullptr || dst == nullptr || dst->managed_tensor_to_py_object_no_sync == nullptr) {
          throw nb::type_error("both types need a __dlpack_c_exchange_api__");
        }
        // Either table may be another framework's: a failure without a Python exception, or a success without a
        // result, is a BufferError rather than a crash.
        const auto failed = [](const char* function) {
          if (PyErr_Occurred()) return nb::python_error();
          PyErr_Format(PyExc_BufferError, "%s failed without an exception or a result", function);
          return nb::python_error();
        };
        DLManagedTensorVersioned* t = nullptr;
        if (src->managed_tensor_from_py_object_no_sync(x.ptr(), &t) != 0 || t == nullptr) {
          throw failed("managed_tensor_from_py_object_no_sync");
        }
        void* out = nullptr;
        if (dst->managed_tensor_to_py_object_no_sync(t, &out) != 0 || out == nullptr) {
          throw failed("managed_tensor_to_py_object_no_sync");
        }
        return nb::steal(static_cast<PyObject*>(out));
      },
      nb::arg("x"), nb::arg("to_type"),
      "x converted to an object of to_type through the two types' C exchange APIs (DLPack 1.3), no capsule.");
}

}  // namespace ortdlpack::py
