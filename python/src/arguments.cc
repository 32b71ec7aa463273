// CPython functions and methods with their arguments read by hand (arguments.h).
#include "arguments.h"

#include <string>

namespace ortdlpack::py {

void parse_arguments(const Parameters& p, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, nb::handle* out) {
  const std::string function = p.function;
  if (static_cast<size_t>(nargs) > p.positional) {
    throw nb::type_error((function + "() takes at most " + std::to_string(p.positional) + " positional arguments (" +
                          std::to_string(nargs) + " given)")
                             .c_str());
  }
  for (size_t i = 0; i < p.count; ++i) out[i] = nb::handle();
  for (Py_ssize_t i = 0; i < nargs; ++i) out[i] = args[i];
  const Py_ssize_t keywords = kwnames != nullptr ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t k = 0; k < keywords; ++k) {
    PyObject* key = PyTuple_GetItem(kwnames, k);
    size_t i = 0;
    while (i < p.count && PyUnicode_CompareWithASCIIString(key, p.names[i]) != 0) ++i;
    if (i == p.count) {
      throw nb::type_error(
          (function + "() got an unexpected keyword argument '" + nb::cast<std::string>(nb::handle(key)) + "'")
              .c_str());
    }
    if (out[i].is_valid()) {
      throw nb::type_error((function + "() got multiple values for argument '" + p.names[i] + "'").c_str());
    }
    out[i] = args[nargs + k];
  }
  for (size_t i = 0; i < p.count; ++i) {
    if (out[i].is_valid()) continue;
    if (i < p.required) {
      throw nb::type_error((function + "() missing required argument: '" + p.names[i] + "'").c_str());
    }
    out[i] = Py_None;
  }
}

nb::object fast_method(PyTypeObject* type, PyMethodDef* def) {
  nb::object method = nb::steal(PyDescr_NewMethod(type, def));
  if (!method.is_valid()) throw nb::python_error();
  return method;
}

nb::object fast_function(PyMethodDef* def) {
  nb::object function = nb::steal(PyCFunction_NewEx(def, nullptr, nullptr));
  if (!function.is_valid()) throw nb::python_error();
  return function;
}

}  // namespace ortdlpack::py
