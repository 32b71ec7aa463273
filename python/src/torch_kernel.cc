// torch's kernel of the operator ortdlpack::run (defined in ortdlpack/_torch_operator.py): one C++ function that
// torch's dispatcher calls with the session's id and the model's inputs, in the model's order, and that returns ORT's
// outputs as torch tensors. It is registered as the operator's Python kernel: torch calls it with no Python frame in
// between (torch.library.custom_op's wrappers cost more than the run of a small model), and its errors reach the
// caller as the exceptions ortdlpack raises everywhere (a C++ kernel's could only be torch's RuntimeError).
//
// The inputs are imported where they are (torch's C exchange API: no copy; a device tensor's producer work is
// adopted, docs/streams.md), ORT allocates the outputs on the inputs' device, and they reach torch through its
// exchange API, ordered for torch's current stream: what Session.run(..., output_type="torch") does, without its
// argument forms.
#include <nanobind/nanobind.h>

#include <string>
#include <vector>

#include "binding.h"

namespace ortdlpack::py {
namespace {

nb::object torch_run(uint64_t id, nb::handle inputs) {
  const std::shared_ptr<const CompiledSession> entry = compiled_session(id);
  Session& session = entry->session;
  if (!PyList_Check(inputs.ptr())) {
    throw nb::type_error(("ortdlpack::run: inputs must be a list of tensors, not " + type_name(inputs.ptr())).c_str());
  }
  const std::vector<IoInfo>& declared = session.inputs();
  const size_t n = static_cast<size_t>(PyList_Size(inputs.ptr()));
  if (n != declared.size()) {
    throw nb::value_error(
        ("ortdlpack::run: " + std::to_string(n) + " inputs for a model of " + std::to_string(declared.size())).c_str());
  }
  Feeds feeds;
  feeds.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    feeds.emplace_back(declared[i].name, import_any(PyList_GetItem(inputs.ptr(), static_cast<Py_ssize_t>(i)),
                                                    nb::none(), nb::none(), "the tensor"));
  }
  RunOptions options;
  options.output_target = Target::on(n > 0 ? feeds[0].second.device() : DLDevice{kDLCPU, 0});
  std::vector<Tensor> outputs;
  {
    nb::gil_scoped_release release;
    outputs = session.run(feeds, {}, options);
  }
  return to_frameworks(outputs, OutputType::kTorch);
}

}  // namespace

void bind_torch_kernel(nb::module_& m) {
  m.def("_torch_run", &torch_run, nb::arg("session"), nb::arg("inputs"),
        nb::sig("def _torch_run(session: int, inputs: list) -> list"),
        "The kernel of the torch operator ortdlpack::run: runs compiled session `session` on `inputs` (torch "
        "tensors, the model's inputs in order) where they are; returns ORT's outputs, allocated on the inputs' "
        "device, as torch tensors (no copy either way).");
}

}  // namespace ortdlpack::py
