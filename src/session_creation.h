// Internal: creating an OrtSession from a SessionConfig (session_config.h), for Session (session.cc).
#pragma once

#include <onnxruntime_c_api.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ortdlpack/handle.h"
#include "ortdlpack/session_config.h"
#include "stream_order.h"

namespace ortdlpack {

inline constexpr const char* kCpuEp = "CPUExecutionProvider";

// A session created from a config: the session, the EP devices it was created with, its providers in ORT's names
// (CPU last), the caller's stream, and whether a provider's options make it capture device graphs (session.h).
struct CreatedSession {
  Owned<OrtSession> session;
  std::vector<const OrtEpDevice*> ep_devices;
  std::vector<std::string> providers;
  std::optional<CallerStream> stream;
  bool captures_graphs = false;
};

// ORT's CreateSession or CreateSessionFromArray on the options made from the config.
using CreateFromOptions = std::function<OrtStatus*(const OrtSessionOptions* options, OrtSession** session)>;

// The session `create` makes with options made from `config`: a copy of config.base (or ORT's defaults) with every
// setting checked and applied, the providers appended. Error(kInvalidArgument) naming the field for a value
// SessionConfig refuses; what ensure_ep() and ORT raise as they raise it.
CreatedSession create_session(const SessionConfig& config, const CreateFromOptions& create);

// Whether a session on EP `ep` (ORT's name) with these provider options captures device graphs: the EP row's option
// set to "1" or "true" (session.h).
bool captures_graphs(const std::string& ep, const std::vector<std::pair<std::string, std::string>>& options);

// The EPs of a borrowed session's EP devices, in order, then the CPU EP (as onnxruntime's get_providers() lists them).
std::vector<std::string> providers_of(const std::vector<const OrtEpDevice*>& ep_devices);

}  // namespace ortdlpack
