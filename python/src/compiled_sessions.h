// Sessions that compiled code names by a number (compiled_sessions.cc): torch's custom op (torch_kernel.cc) and XLA's
// FFI call (xla_ffi.cc) take the session as an integer, the only kind of argument both compilers carry as a constant in
// a graph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "extension.h"

namespace ortdlpack::py {

// A registered session: its core Session, the shape rules it was wrapped with, and its Python registration (`owner`:
// ortdlpack/_compiled.py's CompiledSession, whose ortdlpack.Session keeps the core Session alive). The registry borrows
// it: the torch module or jax function holds it, where the garbage collector sees that reference, so one stored on its
// own session is collected with it. A run in progress when the registration goes takes a reference for the runs left
// (`owned`), released with the GIL by the last one.
struct CompiledSession {
  CompiledSession(Session& core, ShapeRules shape_rules, nb::handle owner);
  ~CompiledSession();
  CompiledSession(const CompiledSession&) = delete;
  CompiledSession& operator=(const CompiledSession&) = delete;

  Session& session;
  const ShapeRules rules;
  PyObject* owner;             // borrowed while registered; owned (`owned`) once released during a run
  mutable bool owned = false;  // (written under the registry's lock; read by the last holder's destructor)
};
// The registered session with that id, shared for the caller's run; Error(kInvalidArgument) when there is none (never
// registered, or released: ids are never reused). Callable without the GIL.
std::shared_ptr<const CompiledSession> compiled_session(uint64_t id);
}  // namespace ortdlpack::py
