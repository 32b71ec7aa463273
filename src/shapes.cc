#include "ortdlpack/shapes.h"

#include "frontend.h"

#include <string>
#include <utility>

#include "ortdlpack/dtype.h"
#include "ortdlpack/error.h"

namespace ortdlpack {
namespace {

std::string spec_string(const TensorSpec& t) {
  std::string s = std::string(dtype_name(t.type)) + "[";
  for (size_t i = 0; i < t.shape.size(); ++i)
    s += (i ? "," : "") + (t.shape[i] >= 0 ? std::to_string(t.shape[i]) : "?");
  return s + "]";
}

// The first input dimension named `name`, or an empty Dim.
Dim named_input_dim(const std::vector<IoInfo>& inputs, const std::string& name) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const IoInfo& in = inputs[i];
    for (size_t a = 0; in.has_shape && a < in.shape.size(); ++a) {
      if (in.shape[a] < 0 && a < in.dim_names.size() && in.dim_names[a] == name) {
        return Dim{-1, static_cast<int>(i), static_cast<int>(a)};
      }
    }
  }
  return Dim{};
}

}  // namespace

ShapeRules::ShapeRules(const std::vector<IoInfo>& inputs, const std::vector<IoInfo>& outputs,
                       const std::string& framework, bool undetermined_allowed)
    : inputs_(inputs) {
  const auto refuse = [&](const IoInfo& io, const char* role, const std::string& why) {
    throw Error(ErrorKind::kInvalidArgument, framework + ": " + role + " '" + io.name + "' (" +
                                                 (io.is_tensor ? io.type_string() : io.onnx_type) +
                                                 ") cannot be described to the framework's tracer: " + why);
  };
  for (const IoInfo& in : inputs_) {
    if (!in.is_tensor) refuse(in, "input", "it is not a tensor");
    std::vector<Dim> named(in.shape.size());
    for (size_t a = 0; in.has_shape && a < in.shape.size(); ++a) {
      if (in.shape[a] < 0 && a < in.dim_names.size() && !in.dim_names[a].empty()) {
        named[a] = named_input_dim(inputs_, in.dim_names[a]);
      }
    }
    inputs_named_.push_back(std::move(named));
  }
  for (const IoInfo& out : outputs) {
    if (!out.is_tensor) refuse(out, "output", "it is not a tensor");
    if (!out.has_shape) refuse(out, "output", "the model declares no rank for it, and ONNX Runtime inferred none");
    std::vector<Dim> dims(out.shape.size());
    for (size_t a = 0; a < out.shape.size(); ++a) {
      if (out.shape[a] >= 0) {
        dims[a].value = out.shape[a];
        continue;
      }
      const std::string& name = a < out.dim_names.size() ? out.dim_names[a] : std::string();
      if (!name.empty()) dims[a] = named_input_dim(inputs_, name);
      if (dims[a].undetermined() && !undetermined_allowed) {
        refuse(out, "output",
               "dimension " + std::to_string(a) +
                   (name.empty() ? " is unnamed" : " ('" + name + "') is named by no input") +
                   ", so only a run tells its size (data-dependent, or computed from other dimensions), and " +
                   framework + " needs every output shape before the computation runs");
      }
    }
    outputs_.push_back(std::move(dims));
  }
}

DerivedShapes ShapeRules::derive(const std::vector<TensorSpec>& given) const {
  const auto invalid = [](const std::string& m) { throw Error(ErrorKind::kInvalidArgument, m); };
  check_positional(inputs_, given.size());
  DerivedShapes d;
  d.device_input = given.empty() ? -1 : 0;
  for (size_t i = 0; i < given.size(); ++i) {
    const IoInfo& io = inputs_[i];
    const TensorSpec& t = given[i];
    const auto mismatch = [&](const std::string& what, const std::string& because = "") {
      return "input '" + io.name + "': " + what + ": the model expects " + io.type_string() + because + ", got " +
             spec_string(t);
    };
    if (t.type != io.element_type) invalid(mismatch("element type mismatch"));
    if (!io.has_shape || io.shape.empty()) continue;
    if (t.shape.size() != io.shape.size()) invalid(mismatch("rank mismatch"));
    for (size_t a = 0; a < t.shape.size(); ++a) {
      const int axis = static_cast<int>(a);
      const std::string what = "dimension " + std::to_string(a) + " mismatch";
      Dim expected;
      std::string because;
      if (io.shape[a] >= 0) {
        expected.value = io.shape[a];
      } else {
        expected = inputs_named_[i][a];
        if (expected.undetermined() || static_cast<size_t>(expected.input) >= given.size() ||
            (expected.input == static_cast<int>(i) && expected.axis == axis)) {
          continue;
        }
        const std::string& first = inputs_[static_cast<size_t>(expected.input)].name;
        because = " with " + io.dim_names[a] + " as in input '" + first + "'";
        const int64_t first_size = given[static_cast<size_t>(expected.input)].shape[static_cast<size_t>(expected.axis)];
        if (first_size >= 0) {
          expected = Dim{first_size};
          because = " with " + io.dim_names[a] + " = " + std::to_string(first_size) + " (from input '" + first + "')";
        }
      }
      if (t.shape[a] >= 0 && expected.known()) {
        if (t.shape[a] != expected.value) invalid(mismatch(what, because));
      } else if (t.shape[a] >= 0) {  // the first input naming it has no size yet: it must equal this one
        d.pending.push_back(PendingCheck{expected.input, expected.axis, Dim{t.shape[a]}, mismatch(what, because)});
      } else {
        d.pending.push_back(PendingCheck{static_cast<int>(i), axis, expected, mismatch(what, because)});
      }
    }
  }
  d.outputs = outputs_;
  for (std::vector<Dim>& dims : d.outputs) {
    for (Dim& dim : dims) {
      if (dim.input >= 0 && static_cast<size_t>(dim.input) >= given.size()) {
        dim = Dim{};  // named by an input left out: only the run tells
      } else if (dim.input >= 0) {
        const int64_t size = given[static_cast<size_t>(dim.input)].shape[static_cast<size_t>(dim.axis)];
        if (size >= 0) dim = Dim{size};
      }
    }
  }
  return d;
}

}  // namespace ortdlpack
