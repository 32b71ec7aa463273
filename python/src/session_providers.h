// A session's providers and options as onnxruntime's arguments give them (session_providers.cc).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "extension.h"

namespace ortdlpack::py {

// The (key, value) pairs of a dict[str, str] argument (None: none); TypeError naming `what` otherwise.
std::vector<std::pair<std::string, std::string>> string_pairs(nb::handle dict, const char* what);
// Provider options as onnxruntime takes them (providers=' options, ep_options=): a dict of names to str, bool, int or
// float values, each as ORT's string (the core's rule, provider_option_value). TypeError naming `what` for anything
// else.
std::vector<std::pair<std::string, std::string>> option_pairs(nb::handle dict, const std::string& what);
// onnxruntime's providers=[name or (name, options)] and provider_options=[options, ...] (one per provider), as the
// core's providers (with_provider_options: onnxruntime's rules; the core checks the names).
std::vector<Provider> to_providers(nb::handle providers, nb::handle provider_options);
// The OrtSessionOptions behind an onnxruntime.SessionOptions (None: NULL), for the core to copy (SessionConfig::base).
const OrtSessionOptions* to_base(nb::handle sess_options);
// The (sess_options, providers, provider_options) ortdlpack.InferenceSession hands to onnxruntime's constructor.
nb::object onnxruntime_providers(nb::handle sess_options, nb::handle providers, nb::handle provider_options,
                                 nb::handle ep, nb::handle ep_options);

}  // namespace ortdlpack::py
