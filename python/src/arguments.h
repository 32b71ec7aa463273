// The extension's fastest calls (arguments.cc): functions and methods made as CPython's own (METH_FASTCALL |
// METH_KEYWORDS), with no dispatcher in between, whose signature inspect reads from their documentation (a
// "name($self, a, b=None, *, c=None)\n--\n\n" first line, CPython's __text_signature__ convention).
#pragma once

#include <cstddef>

#include "extension.h"

namespace ortdlpack::py {

// A function's parameters: their names, how many may be given positionally, how many are required (positional or
// by keyword, the first ones); the others default to None.
struct Parameters {
  const char* function;
  const char* const* names;
  size_t count;
  size_t positional;
  size_t required;
};
// Reads a vectorcall's arguments into `out[0..p.count)` (borrowed; None where not given). TypeError as Python words
// it for too many positional arguments, an unknown or repeated keyword, a missing required argument.
void parse_arguments(const Parameters& p, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, nb::handle* out);

// A CPython method of `type` (a descriptor: `type.name = method`), or a module-level function (`type` NULL), calling
// `call(self_or_module, args, nargs, kwnames)` inside safe_call. `def` must live as long as the process.
nb::object fast_method(PyTypeObject* type, PyMethodDef* def);
nb::object fast_function(PyMethodDef* def);

}  // namespace ortdlpack::py
