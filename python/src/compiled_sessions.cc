// The registry of sessions compiled code names by a number (the core's compiled_sessions.h) as torch_module and
// jax_function use it: a CompiledSession of ortdlpack/_compiled.py registered, its shape rules asked at trace time.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "devices.h"
#include "registrations.h"
#include "sessions.h"

namespace ortdlpack::py {
namespace {

// The registration's ortdlpack.Session, borrowed by the registry (CompiledOwner): a reference taken when the
// registration is released during a run (under the GIL: the registration's finalizer calls release_compiled, while
// its attributes still hold the session; the registration itself is being deallocated then, which no reference can
// stop), dropped by the last run with the GIL.
void hold(const void* o) { Py_INCREF(static_cast<PyObject*>(const_cast<void*>(o))); }
void drop(const void* o) noexcept {
  if (!python_alive()) return;  // (an exiting interpreter's objects are not ours to touch)
  const PyGILState_STATE gil = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(const_cast<void*>(o)));
  PyGILState_Release(gil);
}

// A shape as the tracer gives it: ints, None for a symbolic size.
std::vector<int64_t> shape_of(nb::handle shape, size_t input) {
  std::vector<int64_t> dims;
  for (nb::handle d : shape) {
    dims.push_back(d.is_none() ? -1 : to_integer(d, ("the shape of input " + std::to_string(input)).c_str(), 0));
  }
  return dims;
}

// A derived dimension for Python: an int, (input, axis) for the size of an input's dimension, None when undetermined.
nb::object dim_object(const Dim& d) {
  if (d.known()) return nb::int_(d.value);
  if (d.undetermined()) return nb::none();
  return nb::make_tuple(d.input, d.axis);
}

nb::object derive_shapes(uint64_t id, const std::vector<std::string>& dtypes, nb::handle shapes) {
  const std::shared_ptr<const CompiledSession> entry = compiled_session(id);
  if (nb::len(shapes) != dtypes.size()) throw nb::value_error("one dtype per shape");
  std::vector<TensorSpec> specs;
  for (size_t i = 0; i < dtypes.size(); ++i) {
    specs.push_back(TensorSpec{dtype_from_name(dtypes[i].c_str()), shape_of(shapes[i], i)});
  }
  const DerivedShapes d = entry->rules.derive(specs);
  nb::list outputs;
  for (const std::vector<Dim>& dims : d.outputs) {
    nb::list shape;
    for (const Dim& dim : dims) shape.append(dim_object(dim));
    outputs.append(shape);
  }
  nb::list pending;
  for (const PendingCheck& c : d.pending) {
    pending.append(nb::make_tuple(c.input, c.axis, dim_object(c.expected), c.message));
  }
  return nb::make_tuple(outputs, pending, d.device_input >= 0 ? nb::object(nb::int_(d.device_input)) : nb::none());
}

}  // namespace

void define_compiled_sessions(nb::module_& m) {
  m.def(
      "_compile_session",
      [](nb::handle compiled, const std::string& framework, bool undetermined_allowed) {
        const nb::object session = compiled.attr("session");  // (held by `compiled`)
        const uint64_t id = register_compiled(core_session(session), framework, undetermined_allowed, compiled.ptr(),
                                              CompiledOwner{session.ptr(), &hold, &drop});
        std::vector<std::string> dtypes;
        for (const IoInfo& out : compiled_session(id)->session.outputs())
          dtypes.push_back(dtype_name(out.element_type));
        return nb::make_tuple(id, dtypes);
      },
      nb::arg("compiled"), nb::arg("framework"), nb::arg("undetermined_allowed"),
      "Registers a CompiledSession (ortdlpack/_compiled.py; its `session`, an ortdlpack.Session) for compiled code: "
      "returns (id, the outputs' dtype names). Raises, naming the input or output, for a model the framework's "
      "tracer cannot be told about. The registry borrows the registration and its session while it lives.");
  m.def("_release_compiled", &release_compiled, nb::arg("id"));
  m.def(
      "_check_positional",
      [](uint64_t id, size_t count) { check_positional(compiled_session(id)->session.inputs(), count); }, nb::arg("id"),
      nb::arg("count"),
      "The core's rule of a compiled call's arguments (check_positional): ValueError for `count` inputs the model "
      "cannot take.");
  m.def(
      "_compiled_session",
      [](uint64_t id) {
        return nb::borrow(static_cast<PyObject*>(const_cast<void*>(compiled_session(id)->registration)));
      },
      nb::arg("id"), nb::sig("def _compiled_session(id: int) -> object"),
      "The CompiledSession registered with that id; ValueError once it was released (ids are never reused).");
  m.def("_derive_shapes", &derive_shapes, nb::arg("id"), nb::arg("dtypes"), nb::arg("shapes"),
        nb::sig("def _derive_shapes(id: int, dtypes: list[str], shapes: list) -> tuple[list, list, int | None]"),
        "The outputs' shapes for inputs of these dtypes and shapes (None for a symbolic size), and the checks "
        "pending on symbolic sizes, and the input whose device the outputs are on (None: CPU): (outputs, [(input, "
        "axis, expected, message)], device_input). A dimension is an int, "
        "(input, axis) for an input's symbolic size, or None when only the run tells it.");
}

}  // namespace ortdlpack::py
