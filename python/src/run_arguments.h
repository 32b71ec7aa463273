// One run's arguments from Python converted once into the core's RunRequest (run_arguments.cc): feeds imported as
// Tensors or kept as the values onnxruntime's run reads its own way, output names, destinations, in_place, where
// outputs go and who reads them. Every decision about them is the core's (frontend.h).
#pragma once

#include <string>
#include <vector>

#include "output_frameworks.h"

namespace ortdlpack::py {

// One run's arguments as the caller gave them, and what the API that took them makes of them.
struct RunArguments {
  nb::handle feeds, output_names, outputs, in_place, device, output_type;
  // What output_type=None means: the API's default (ortdlpack.run: 'ortdlpack'; InferenceSession: its constructor's,
  // else like the feeds).
  Framework default_output = Framework::kOrtdlpack;
  // Whether the API runs values (InferenceSession, ortdlpack.run: onnxruntime's run reads numpy arrays, lists, None,
  // dicts its own way); else every feed is imported as a Tensor (ortdlpack.Session, bind()).
  bool takes_values = false;
  const char* feeds_argument = "feeds";  // how messages name the feeds
  // Whether the feeds are bound for many runs (bind(), a Binding's rebinding): each must be read where it is (a copy
  // made now would not see later writes: CopyRequiredError), and those whose memory may move under their export
  // (memory_may_move: torch's) are kept to be asked again before every run.
  bool binds = false;
};

// A call whose shape onnxruntime's own run takes apart itself (feeds that are no mapping or keyed by something other
// than str, output names that are no sequence of str): the drop-in hands it to onnxruntime's run, whose error (or
// result) it is; ortdlpack's own APIs raise TypeError with `message`.
struct Malformed {
  std::string message;
};

// A run's arguments converted.
struct Request {
  RunRequest run;                  // the core's request
  std::vector<nb::object> values;  // the values of run.values, in order
  OutputFramework output;          // what the outputs are made as
  nb::handle first_feed;           // the caller's first feed, if any (borrowed from the caller's mapping)
  // With RunArguments::binds: each feed's and destination's object, by index in run.feeds (or, `destination`, in
  // run.options.destinations), and whether its memory may move under its export (memory_may_move: asked again before
  // every run).
  struct Bound {
    size_t index;
    bool destination;
    nb::object object;
    bool movable;
  };
  std::vector<Bound> bound;

  template <class F>
  void references(F f) {  // (Gc)
    for (nb::object& v : values) f(v);
    for (Bound& b : bound) f(b.object);
  }
};

// Converts `a` into `r` for a run of `session`. Throws Malformed for a call's shape onnxruntime would refuse itself,
// the import's errors (with the input's name) for a feed, TypeError for an argument of the wrong type.
// `session` NULL: a session ortdlpack cannot reach (lists stay values onnxruntime's run makes arrays of; where values
// are not taken, a list is no DLPack producer: TypeError).
void convert(const Session* session, const RunArguments& a, Request& r);
// Value `index` of `r` (an array: run.values[index].array) as a Tensor, imported as the core's executor binds it.
Tensor value_as_tensor(const Session& session, const Request& r, size_t index);

}  // namespace ortdlpack::py
