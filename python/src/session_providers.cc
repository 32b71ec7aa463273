// A session's providers and options as onnxruntime's arguments give them: providers= and provider_options= as the
// core's providers, a dict[str, str] argument, the ORT options behind an onnxruntime.SessionOptions, and the
// providers= ortdlpack.InferenceSession hands to onnxruntime (EP names resolved, options completed).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/stl/string.h>

#include "devices.h"
#include "onnxruntime_objects.h"
#include "session_providers.h"

namespace ortdlpack::py {
namespace {

// A provider option value as ORT takes it, a string: str as it is, bool as "1"/"0", int and float as Python writes
// them (onnxruntime accepts these too).
std::string option_value(nb::handle v, const std::string& what) {
  if (PyUnicode_Check(v.ptr())) return nb::cast<std::string>(v);
  if (PyBool_Check(v.ptr())) return v.is(Py_True) ? "1" : "0";
  if (PyLong_Check(v.ptr()) || PyFloat_Check(v.ptr())) return nb::cast<std::string>(nb::str(v));
  throw nb::type_error((what + " must be a str, bool, int or float, not " + type_name(v.ptr())).c_str());
}

}  // namespace

std::vector<std::pair<std::string, std::string>> option_pairs(nb::handle dict, const std::string& what) {
  if (!PyDict_Check(dict.ptr())) {
    throw nb::type_error((what + " must be a dict of option names to values, not " + type_name(dict.ptr())).c_str());
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (auto [k, v] : nb::borrow<nb::dict>(dict)) {
    std::string key = str_of(k, (what + " key").c_str());
    pairs.emplace_back(key, option_value(v, what + "['" + key + "']"));
  }
  return pairs;
}

// The (key, value) pairs of a dict[str, str] argument (None: none).
std::vector<std::pair<std::string, std::string>> string_pairs(nb::handle dict, const char* what) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (dict.is_none()) return pairs;
  if (!PyDict_Check(dict.ptr())) throw nb::type_error((std::string(what) + " must be a dict[str, str]").c_str());
  for (auto [k, v] : nb::borrow<nb::dict>(dict)) pairs.emplace_back(str_of(k, what), str_of(v, what));
  return pairs;
}

// onnxruntime's providers=[name or (name, options)] and provider_options=[options, ...] as the core's providers
// (with_provider_options: onnxruntime's rules). TypeError for another shape.
std::vector<Provider> to_providers(nb::handle providers, nb::handle provider_options) {
  const auto sequence = [](nb::handle x, const char* what) {
    if (!PyList_Check(x.ptr()) && !PyTuple_Check(x.ptr())) {
      throw nb::type_error((std::string(what) + ", not " + type_name(x.ptr())).c_str());
    }
  };
  std::optional<std::vector<Provider>> named;
  bool pairs = false;
  if (!providers.is_none()) {
    sequence(providers, "providers must be a list of provider names or (name, options) tuples");
    named.emplace();
    for (nb::handle p : providers) {
      if (PyUnicode_Check(p.ptr())) {
        named->push_back(Provider{nb::cast<std::string>(p), {}});
      } else if (PyTuple_Check(p.ptr()) && nb::len(p) == 2 && PyUnicode_Check(p[0].ptr())) {
        const std::string name = nb::cast<std::string>(p[0]);
        pairs = true;
        named->push_back(Provider{name, option_pairs(p[1], "the options of provider '" + name + "'")});
      } else {
        throw nb::type_error(("providers entries must be a name (str) or a (name, options) tuple, not " +
                              nb::cast<std::string>(nb::repr(p)))
                                 .c_str());
      }
    }
  }
  std::optional<std::vector<std::vector<std::pair<std::string, std::string>>>> options;
  if (!provider_options.is_none()) {
    sequence(provider_options, "provider_options must be a list of dicts, one per provider");
    options.emplace();
    for (nb::handle o : provider_options) {
      options->push_back(option_pairs(o, "provider_options[" + std::to_string(options->size()) + "]"));
    }
  }
  return with_provider_options(std::move(named), options, pairs);
}

// The OrtSessionOptions behind an onnxruntime.SessionOptions, for the core to copy (SessionConfig::base).
const OrtSessionOptions* to_base(nb::handle sess_options) {
  if (sess_options.is_none()) return nullptr;
  if (!is_session_options(sess_options)) {
    throw nb::type_error(
        ("sess_options must be an onnxruntime.SessionOptions or None, not " + type_name(sess_options.ptr())).c_str());
  }
  if (nb::cast<bool>(sess_options.attr("has_providers")())) {
    // ORT cannot list them: the session's providers, and the memory it may write outputs to, would be unknown.
    throw nb::value_error(
        "sess_options has execution providers added to it (add_provider, add_provider_for_devices): "
        "pass them as providers= instead");
  }
  return onnxruntime_session_options(sess_options, "sess_options", ": pass the settings as ortdlpack.Session keywords");
}

// onnxruntime.InferenceSession's arguments as ortdlpack.InferenceSession hands them to onnxruntime: ep= / ep_options=
// by the core's rule (wanted_providers), providers= as the core hands them off (hand_off_providers: names resolved,
// options completed, plugin EPs by their devices on a SessionOptions of ortdlpack's when the caller gave none).
// providers= that is not a list of names or (name, options) pairs goes to onnxruntime as it is (its errors are
// onnxruntime's). Returns (sess_options, providers, provider_options).
nb::object onnxruntime_providers(nb::handle sess_options, nb::handle providers, nb::handle provider_options,
                                 nb::handle ep, nb::handle ep_options) {
  const nb::object unchanged = nb::make_tuple(sess_options, providers, provider_options);
  std::vector<Provider> wanted;
  bool separate = false;  // provider_options= given apart: handed back the same way
  if (!ep.is_none() || !ep_options.is_none()) {
    SessionConfig c;
    if (!ep.is_none()) c.ep = str_of(ep, "ep");
    if (!ep_options.is_none()) c.ep_options = option_pairs(ep_options, "ep_options");
    if (!providers.is_none()) c.providers = {Provider{"providers", {}}};  // (the rule refuses both)
    wanted = wanted_providers(c);
  } else {
    if (providers.is_none()) return unchanged;
    separate = !provider_options.is_none();
    try {  // an argument ortdlpack's rules refuse is onnxruntime's to judge (its error, or what it makes of it)
      wanted = to_providers(providers, provider_options);
    } catch (const nb::builtin_exception&) {
      return unchanged;
    } catch (const Error&) {
      return unchanged;
    }
  }
  ProviderHandoff handoff;
  {
    nb::gil_scoped_release release;  // registering an EP library asks the package finder, which takes the GIL
    handoff = hand_off_providers(wanted, !sess_options.is_none());
  }
  const nb::object ort = nb::module_::import_("onnxruntime");
  const auto options_of = [](const ProviderHandoff::Entry& e) {
    nb::dict d;
    for (const auto& [k, v] : e.options) d[k.c_str()] = v.c_str();
    return d;
  };
  if (handoff.by_devices) {
    const nb::list devices = nb::list(ort.attr("get_ep_devices")());
    nb::object so = ort.attr("SessionOptions")();
    for (const ProviderHandoff::Entry& e : handoff.entries) {
      nb::list of;  // onnxruntime's OrtEpDevices of the devices the core selected, in onnxruntime's order
      for (nb::handle d : devices) {
        if (nb::cast<std::string>(d.attr("ep_name")) != e.ep) continue;
        if (std::find(e.devices.begin(), e.devices.end(), ep_device_of(d)) != e.devices.end()) of.append(d);
      }
      so.attr("add_provider_for_devices")(of, options_of(e));
    }
    return nb::make_tuple(so, nb::none(), nb::none());
  }
  nb::list names, options;
  for (const ProviderHandoff::Entry& e : handoff.entries) {
    names.append(separate ? nb::object(nb::str(e.ep.c_str()))
                          : nb::object(nb::make_tuple(e.ep.c_str(), options_of(e))));
    if (separate) options.append(options_of(e));
  }
  return nb::make_tuple(sess_options, names, separate ? nb::object(options) : nb::object(nb::none()));
}

}  // namespace ortdlpack::py
