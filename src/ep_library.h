// Internal: the explicit registration steps of EP libraries (ep.h) and the env's EP devices of one EP.
//
// Registering a library is a side effect with a cost (ORT loads it, the EP enumerates hardware), so it happens only
// where an entry point names it: ensure_ep() (sessions), ensure_ep_for() (allocation, copies and stream ordering on
// device memory). Lookups — the device table, stream lookups, error messages — never register anything.
#pragma once

#include <onnxruntime_c_api.h>

#include <string>
#include <utility>
#include <vector>

namespace ortdlpack::detail {

// Makes sure an EP of the env serves `memory` (its allocator, data transfer and streams): when none does, the
// library of the EP table's row that owns that memory is registered (ensure_ep()), once. No-op for host memory and
// memory no row owns; never throws for a library that cannot be registered (the allocation or copy that needed it
// then fails with missing_ep_message()). Cheap once a memory was served: its answer is kept.
void ensure_ep_for(const OrtMemoryInfo* memory);

// Why the env has no allocator / data transfer for `memory`, and what to install: for error messages. Registers
// nothing: it reports what ensure_ep_for() found.
std::string missing_ep_message(const OrtMemoryInfo* memory);

// The EP devices of the env whose EP is named `ep_name`, in the env's order (empty when it has none).
std::vector<const OrtEpDevice*> ep_devices_of(const std::string& ep_name);

// Why ORT refuses a session on EP `ep_name`'s devices with these provider options (a model of one Add, which the
// CPU EP runs where the EP claims nothing): ORT's message, "" when the session is created. Registers nothing.
std::string session_refusal(const std::string& ep_name,
                            const std::vector<std::pair<std::string, std::string>>& options);

// Whether an ORT distribution ships the library of EP `name` (canonical_ep_name() applied) next to ORT.
bool ships_with_ort(const std::string& name);

}  // namespace ortdlpack::detail
