// torch's kernels of the operator ortdlpack::run (defined in ortdlpack/_torch_operator.py): C++ functions that run a
// compiled session on the model's inputs (torch tensors, in the model's order) and hand its outputs to torch.
//   _torch_run(session, inputs) -> outputs: the operator's kernel, for every dispatch key. ORT allocates the outputs
//     on the inputs' device; they reach torch through its C exchange API, ordered for torch's current stream. It is
//     registered as the operator's Python kernel: torch calls it with no Python frame in between (custom_op's wrappers
//     cost more than the run of a small model), and its errors reach the caller as the session APIs raise them
//     everywhere, onnxruntime's classes for ORT's (a C++ kernel's could only be torch's RuntimeError).
//   _torch_run_into(*inputs, session, out=output): what code Inductor generates calls for a model of one output whose
//     size its inputs' sizes give: ORT writes that output into `out`, the buffer Inductor allocated (from its pool,
//     in the layout its next kernels were compiled for). No output crosses the exchange API, and a model whose output
//     is not that size fails in ORT's check of the buffer, before anything reads it.
// Both import the inputs where they are (no copy; a device tensor's producer work is adopted, docs/streams.md).
#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "errors.h"
#include "output_frameworks.h"
#include "registrations.h"
#include "tensors.h"

namespace ortdlpack::py {
namespace {

// The first `n` items of `items` (a list or a tuple, read through the limited API the abi3 wheel is built against) as
// the session's feeds, the model's inputs in order (check_positional: the core's one rule for compiled calls).
Feeds feeds_of(const Session& session, nb::handle items, size_t n) {
  const std::vector<IoInfo>& inputs = session.inputs();
  check_positional(inputs, n);
  const bool list = PyList_Check(items.ptr());
  Feeds feeds;
  feeds.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const auto at = static_cast<Py_ssize_t>(i);
    PyObject* item = list ? PyList_GetItem(items.ptr(), at) : PyTuple_GetItem(items.ptr(), at);  // (borrowed)
    feeds.emplace_back(inputs[i].name, import_any(item, nb::none(), nb::none(), "the tensor"));
  }
  return feeds;
}

// Runs without the GIL (ORT's threads may wait for others that need it), the outputs on the first input's device
// (compiled_outputs_target: what the operator's fake implementation told the tracer).
std::vector<Tensor> run(Session& session, RunRequest& request) {
  request.options.output_target = compiled_outputs_target(request.feeds);
  request.reader = Reader{Framework::kTorch, false};
  return onnxruntime_errors([&] {
    nb::gil_scoped_release release;
    return ortdlpack::run(session, request, nullptr).outputs;
  });
}

nb::object torch_run(uint64_t id, nb::handle inputs) {
  const std::shared_ptr<const CompiledSession> entry = compiled_session(id);
  if (!PyList_Check(inputs.ptr())) {
    throw nb::type_error(("ortdlpack::run: inputs must be a list of tensors, not " + type_name(inputs.ptr())).c_str());
  }
  RunRequest request;
  request.feeds = feeds_of(entry->session, inputs, static_cast<size_t>(PyList_Size(inputs.ptr())));
  return to_frameworks(run(entry->session, request), OutputFramework{Framework::kTorch, nullptr});
}

void torch_run_into(nb::args args, nb::handle out) {
  const size_t n = args.size();
  if (n == 0) throw nb::type_error("ortdlpack::run: _torch_run_into(*inputs, session, out=...) has no session");
  uint64_t id = 0;
  if (!nb::try_cast(args[n - 1], id)) {
    throw nb::type_error(
        ("ortdlpack::run: _torch_run_into's last positional argument is the session's id (an int), not " +
         type_name(args[n - 1].ptr()))
            .c_str());
  }
  const std::shared_ptr<const CompiledSession> entry = compiled_session(id);
  Session& session = entry->session;
  if (session.outputs().size() != 1) {
    throw nb::value_error(
        ("ortdlpack::run: _torch_run_into writes one output; the model has " + std::to_string(session.outputs().size()))
            .c_str());
  }
  RunRequest request;
  request.feeds = feeds_of(session, args, n - 1);
  // Never a copy: ORT would write into the copy.
  request.options.destinations.emplace_back(session.outputs()[0].name,
                                            import_any(out, nb::none(), nb::bool_(false), "out"));
  order_for_torch(run(session, request)[0]);  // (the destination itself)
}

}  // namespace

void define_torch_kernel(nb::module_& m) {
  m.def("_torch_run", &torch_run, nb::arg("session"), nb::arg("inputs"),
        nb::sig("def _torch_run(session: int, inputs: list) -> list"),
        "The kernel of the torch operator ortdlpack::run: runs compiled session `session` on `inputs` (torch "
        "tensors, the model's inputs in order) where they are; returns ORT's outputs, allocated on the inputs' "
        "device, as torch tensors (no copy either way).");
  m.def("_torch_run_into", &torch_run_into, nb::arg("args"), nb::kw_only(), nb::arg("out"),
        nb::sig("def _torch_run_into(*args: object, out: object) -> None"),
        "What Inductor's code calls for ortdlpack::run on a model of one output: runs compiled session args[-1] "
        "on args[:-1] (torch tensors, the model's inputs in order) where they are, writing the output into `out` "
        "(a torch tensor of the output's dtype and size, on the device the session writes it to; never copied).");
}

}  // namespace ortdlpack::py
