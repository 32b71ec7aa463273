// Sessions compiled code names by a number: torch's operator (ortdlpack::run) and XLA's FFI call (ortdlpack_run)
// take the session as an integer, the only kind of argument both compilers carry as a constant in a graph. The
// registry maps it to the core Session; an id is never reused, so a graph that outlives its session (an exported
// program, a cached executable) gets a clear error, never another session. A run holds its entry for its duration:
// releasing a session while a run on another thread is in flight (JAX dispatches asynchronously) is safe.
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "compiled_sessions.h"
#include "devices.h"
#include "registrations.h"
#include "sessions.h"

namespace ortdlpack::py {
namespace {

std::mutex g_mutex;
std::unordered_map<uint64_t, std::shared_ptr<const CompiledSession>>* g_sessions = nullptr;  // never destroyed
std::atomic<uint64_t> g_next_id{1};

// `compiled`: the Python registration (ortdlpack/_compiled.py's CompiledSession), whose `session` is the
// ortdlpack.Session it wraps.
uint64_t register_session(nb::handle compiled, const std::string& framework, bool undetermined_allowed) {
  Session& core = core_session(compiled.attr("session"));
  auto entry = std::make_shared<const CompiledSession>(
      core, ShapeRules(core.inputs(), core.outputs(), framework, undetermined_allowed), compiled);
  const uint64_t id = g_next_id++;
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (g_sessions == nullptr) g_sessions = new std::unordered_map<uint64_t, std::shared_ptr<const CompiledSession>>();
  g_sessions->emplace(id, std::move(entry));
  return id;
}

// Called by the Python registration's finalizer, with the GIL: from now on only runs in progress hold the entry, and
// they hold the session too.
void release_session(uint64_t id) {
  std::shared_ptr<const CompiledSession> entry;  // released after the lock (its destructor may take the GIL)
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (g_sessions == nullptr) return;
  auto it = g_sessions->find(id);
  if (it == g_sessions->end()) return;
  entry = std::move(it->second);
  g_sessions->erase(it);
  if (entry.use_count() > 1) {  // a run holds it (copies are made under this lock: none can appear now)
    Py_INCREF(entry->owner);
    entry->owned = true;
  }
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

CompiledSession::CompiledSession(Session& core, ShapeRules shape_rules, nb::handle session_object)
    : session(core), rules(std::move(shape_rules)), owner(session_object.ptr()) {}

CompiledSession::~CompiledSession() {
  if (!owned || !python_alive()) return;  // (an exiting interpreter's objects are not ours to touch)
  nb::gil_scoped_acquire gil;
  Py_DECREF(owner);
}

std::shared_ptr<const CompiledSession> compiled_session(uint64_t id) {
  {
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (g_sessions != nullptr) {
      auto it = g_sessions->find(id);
      if (it != g_sessions->end()) return it->second;
    }
  }
  throw Error(ErrorKind::kInvalidArgument,
              "ortdlpack: compiled session " + std::to_string(id) +
                  " is not registered: the torch module or jax function that wrapped it was released (a compiled "
                  "graph or exported program runs only while its wrapper lives, in the process that made it)");
}

void define_compiled_sessions(nb::module_& m) {
  m.def(
      "_compile_session",
      [](nb::handle compiled, const std::string& framework, bool undetermined_allowed) {
        const uint64_t id = register_session(compiled, framework, undetermined_allowed);
        std::vector<std::string> dtypes;
        for (const IoInfo& out : compiled_session(id)->session.outputs())
          dtypes.push_back(dtype_name(out.element_type));
        return nb::make_tuple(id, dtypes);
      },
      nb::arg("compiled"), nb::arg("framework"), nb::arg("undetermined_allowed"),
      "Registers a CompiledSession (ortdlpack/_compiled.py; its `session`, an ortdlpack.Session) for compiled code: "
      "returns (id, the outputs' dtype names). Raises, naming the input or output, for a model the framework's "
      "tracer cannot be told about. The registry borrows the registration, which lives as long as its Python "
      "object.");
  m.def("_release_compiled", &release_session, nb::arg("id"));
  m.def(
      "_check_positional",
      [](uint64_t id, size_t count) { check_positional(compiled_session(id)->session.inputs(), count); }, nb::arg("id"),
      nb::arg("count"),
      "The core's rule of a compiled call's arguments (check_positional): ValueError for `count` inputs the model "
      "cannot take.");
  m.def(
      "_compiled_session", [](uint64_t id) { return nb::borrow(compiled_session(id)->owner); }, nb::arg("id"),
      nb::sig("def _compiled_session(id: int) -> object"),
      "The CompiledSession registered with that id; ValueError once it was released (ids are never reused).");
  m.def("_derive_shapes", &derive_shapes, nb::arg("id"), nb::arg("dtypes"), nb::arg("shapes"),
        nb::sig("def _derive_shapes(id: int, dtypes: list[str], shapes: list) -> tuple[list, list, int | None]"),
        "The outputs' shapes for inputs of these dtypes and shapes (None for a symbolic size), and the checks "
        "pending on symbolic sizes, and the input whose device the outputs are on (None: CPU): (outputs, [(input, "
        "axis, expected, message)], device_input). A dimension is an int, "
        "(input, axis) for an input's symbolic size, or None when only the run tells it.");
}

}  // namespace ortdlpack::py
