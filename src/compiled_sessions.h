// Internal, for front ends: the sessions compiled code names by a number. torch's operator (ortdlpack::run) and XLA's
// FFI call (ortdlpack_run) take the session as an integer, the only kind of argument both compilers carry as a
// constant in a graph; the registry maps it to the core Session and its shape rules. An id is never reused, so a graph
// that outlives its session (an exported program, a cached executable) gets a clear error, never another session. A
// run holds its entry for its duration: releasing a session while a run on another thread is in flight (JAX
// dispatches asynchronously) is safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ortdlpack/session.h"
#include "ortdlpack/shapes.h"

namespace ortdlpack {

/// \brief The front end's object that keeps a registered Session alive (`object`: its Python ortdlpack.Session),
/// borrowed while registered (the front end's registration holds it, where its garbage collector sees the reference);
/// `hold` takes a reference when the registration goes while a run holds the entry (the registration is going away
/// then, the object it holds not yet), `drop` releases it when that run ends. The front end takes whatever lock its
/// objects need.
struct CompiledOwner {
  const void* object;
  void (*hold)(const void* object);
  void (*drop)(const void* object) noexcept;
};

/// \brief A registered session: its Session, the shape rules it was registered with, the front end's registration
/// (borrowed: handed back by lookups while registered) and what keeps the Session alive.
struct CompiledSession {
  CompiledSession(Session& core, ShapeRules shape_rules, const void* registration, CompiledOwner owner);
  ~CompiledSession();
  CompiledSession(const CompiledSession&) = delete;
  CompiledSession& operator=(const CompiledSession&) = delete;

  Session& session;
  const ShapeRules rules;
  const void* const registration;
  const CompiledOwner owner;
  mutable bool owned = false;  // held (owner.hold) since release_compiled; written under the registry's lock
};

/// \brief Registers `session` for compiled code of `framework` (ShapeRules: Error(kInvalidArgument) naming the input
/// or output a tracer cannot be told about) and returns its id. `owner` must keep `session` alive, and `registration`
/// live, until released.
uint64_t register_compiled(Session& session, const std::string& framework, bool undetermined_allowed,
                           const void* registration, CompiledOwner owner);
/// \brief Ends the registration of `id` (an unknown id: nothing): only runs in progress hold the entry from now on,
/// and the last of them drops the owner.
void release_compiled(uint64_t id);
/// \brief The registered session with that id, shared for the caller's run; Error(kInvalidArgument) when there is
/// none (never registered, or released). Callable from any thread.
std::shared_ptr<const CompiledSession> compiled_session(uint64_t id);

}  // namespace ortdlpack
