// The registry of sessions compiled code names by a number (compiled_sessions.h).
#include "compiled_sessions.h"

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

std::mutex g_mutex;
std::unordered_map<uint64_t, std::shared_ptr<const CompiledSession>>* g_sessions = nullptr;  // never destroyed
std::atomic<uint64_t> g_next_id{1};

}  // namespace

CompiledSession::CompiledSession(Session& core, ShapeRules shape_rules, const void* r, CompiledOwner o)
    : session(core), rules(std::move(shape_rules)), registration(r), owner(o) {}

CompiledSession::~CompiledSession() {
  if (owned) owner.drop(owner.object);
}

uint64_t register_compiled(Session& session, const std::string& framework, bool undetermined_allowed,
                           const void* registration, CompiledOwner owner) {
  auto entry = std::make_shared<const CompiledSession>(
      session, ShapeRules(session.inputs(), session.outputs(), framework, undetermined_allowed), registration, owner);
  const uint64_t id = g_next_id++;
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (g_sessions == nullptr) g_sessions = new std::unordered_map<uint64_t, std::shared_ptr<const CompiledSession>>();
  g_sessions->emplace(id, std::move(entry));
  return id;
}

void release_compiled(uint64_t id) {
  std::shared_ptr<const CompiledSession> entry;  // released after the lock (its owner's drop may take a lock)
  const std::lock_guard<std::mutex> lock(g_mutex);
  if (g_sessions == nullptr) return;
  auto it = g_sessions->find(id);
  if (it == g_sessions->end()) return;
  entry = std::move(it->second);
  g_sessions->erase(it);
  if (entry.use_count() > 1) {  // a run holds it (copies are made under this lock: none can appear now)
    entry->owner.hold(entry->owner.object);
    entry->owned = true;
  }
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

}  // namespace ortdlpack
