// One run's arguments converted once (run_arguments.h): every producer from_dlpack takes imported as a Tensor, the
// objects onnxruntime's run reads its own way kept as values (numpy arrays, lists, None, dicts: InferenceSession and
// ortdlpack.run), output names, destinations, in_place, where outputs go and what they are made as. What becomes of
// each is the core's decision (frontend.h: the route, the plan).
#include "run_arguments.h"

#include <string>
#include <utility>

#include "devices.h"
#include "errors.h"
#include "numpy_arrays.h"
#include "ortvalues.h"
#include "tensors.h"

namespace ortdlpack::py {
namespace {

// Calls `take(name, value)` for every (name, value) pair of the mapping argument `argument`; an error names the entry
// (`entry` 'name'). A mapping that is not one, or a key that is no str, is Malformed where `malformed` (the feeds:
// onnxruntime's run says what it makes of them), else a TypeError (ortdlpack's own arguments).
template <class Take>
void for_items(nb::handle mapping, const char* argument, const char* entry, bool malformed, Take take) {
  const auto refuse = [&](const std::string& message) {
    if (malformed) throw Malformed{message};
    throw nb::type_error(message.c_str());
  };
  const auto add = [&](nb::handle k, nb::handle v) {
    if (!PyUnicode_Check(k.ptr())) refuse(std::string(argument) + " key must be str, not " + type_name(k.ptr()));
    try {
      take(nb::cast<std::string>(k), v);
    } catch (nb::python_error& e) {
      // Raised by Python code (a producer's own __dlpack__): kept as it is, class and object, with a note (an
      // interrupt propagates untouched).
      only_exceptions(e);
      add_note(e, std::string("ortdlpack: raised importing ") + entry + " '" + nb::cast<std::string>(k) + "'");
      throw;
    } catch (const Error& e) {  // ortdlpack's own: the same error, with the entry's name in front
      throw e.reworded(std::string(entry) + " '" + nb::cast<std::string>(k) + "': " + e.what());
    }
  };
  if (PyDict_Check(mapping.ptr())) {
    for (auto [k, v] : nb::borrow<nb::dict>(mapping)) add(k, v);
    return;
  }
  if (!PyMapping_Check(mapping.ptr()) || PyList_Check(mapping.ptr()) || PyTuple_Check(mapping.ptr()) ||
      !has_attribute(mapping, "items")) {
    refuse(std::string(argument) + " must be a mapping of " + entry + " names to tensors, not " +
           type_name(mapping.ptr()));
  }
  nb::object items = nb::steal(PyMapping_Items(mapping.ptr()));
  if (!items.is_valid()) throw nb::python_error();
  for (nb::handle item : items) add(item[0], item[1]);
}

// A destination torch's autograd tracks (requires_grad): ORT's write would bypass it, and torch itself refuses to
// write such a leaf in place or to export any such tensor. Asked of types that have the attribute only.
void refuse_if_autograd_tracks(nb::handle x) {
  static PyObject* const attribute = PyUnicode_InternFromString("requires_grad");  // process lifetime
  if (class_attribute(Py_TYPE(x.ptr()), attribute) == nullptr) return;
  nb::object tracked = nb::steal(PyObject_GetAttr(x.ptr(), attribute));
  if (!tracked.is_valid()) throw nb::python_error();
  if (PyObject_IsTrue(tracked.ptr()) == 1) {
    throw Error(ErrorKind::kInvalidArgument,
                "requires grad: ORT's write would bypass autograd, as torch's own in-place writes to such a leaf and "
                "its export would (\"Can't export tensors that require gradient, use tensor.detach()\"): pass a "
                "detached tensor");
  }
}

// A list or a Python scalar fed for input `name`, as onnxruntime takes lists: a numpy array of the input's declared
// element type (list_element_type; one copy, allowed: it is no tensor), else numpy's own. A list numpy cannot make
// such an array of is onnxruntime's RuntimeError for it.
Tensor list_as_tensor(const Session& session, const std::string& name, nb::handle x) {
  static PyObject* const asarray = module_attribute("numpy", "asarray");
  const ONNXTensorElementDataType type = list_element_type(session, name);
  nb::object array;
  try {
    array = type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED ? nb::borrow(asarray)(x)
                                                            : nb::borrow(asarray)(x, numpy_dtype_of(type));
  } catch (nb::python_error& e) {
    only_exceptions(e);
    throw Error(ErrorKind::kRuntime, "Could not create tensor from given input list: numpy cannot make " +
                                         std::string(type == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED
                                                         ? "an array"
                                                         : std::string("a ") + dtype_name(type) + " array") +
                                         " of the " + type_name(x.ptr()) + " (" +
                                         nb::cast<std::string>(nb::str(e.value())) + ")");
  }
  return import_any(array, nb::none(), nb::none(), "the tensor");
}

// A feed bound for many runs, or written in place: read where it is, never a copy, which later writes to `x` would
// not reach, nor ORT's writes `x`.
Tensor bound_feed(nb::handle x) {
  try {
    return import_any(x, nb::none(), nb::borrow(Py_False), "the tensor");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kCopyRequired) throw;
    throw e.reworded(std::string("ORT reads this feed where it is on every run of a Binding, and writes a feed in "
                                 "place where it is, and this one only a copy made now could hold (") +
                     e.what() +
                     "): later writes to it would not reach the runs, nor ORT's writes it; pass a "
                     "contiguous tensor");
  }
}

bool is_list_or_scalar(nb::handle x) {
  return PyList_Check(x.ptr()) || PyLong_Check(x.ptr()) || PyFloat_Check(x.ptr()) ||
         numpy_kind(x) == NumpyKind::kScalar;
}

// How a feed reaches a run that takes values: a Tensor to import (any DLPack producer onnxruntime's run cannot read:
// torch, jax, ..., ortdlpack.Tensor, an ml_dtypes array), an array onnxruntime's run reads as it is (numpy, its own
// OrtValue, a list for a tensor input), or a value only onnxruntime's run takes (strings, sequences, maps, None,
// scalars: onnxruntime says what it makes of them).
enum class Fed { kTensor, kArray, kValue };
Fed classify(const Session* session, const std::string& name, nb::handle x) {
  if (is_tensor(x) || PyCapsule_CheckExact(x.ptr())) return Fed::kTensor;
  switch (numpy_kind(x)) {
    case NumpyKind::kNative:
      return Fed::kArray;
    case NumpyKind::kOther:
      return numpy_extension_type(x) != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED ? Fed::kTensor : Fed::kValue;
    case NumpyKind::kStrings:
    case NumpyKind::kScalar:
      return Fed::kValue;
    case NumpyKind::kNone:
      break;
  }
  if (PyList_Check(x.ptr())) {
    const bool tensor =
        session != nullptr && list_element_type(*session, name) != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    return tensor ? Fed::kArray : Fed::kValue;
  }
  if (is_ortvalue(x)) {
    const bool tensor =
        nb::cast<bool>(x.attr("is_tensor")()) && !x.attr("data_type")().equal(nb::str("tensor(string)"));
    return tensor ? Fed::kArray : Fed::kValue;
  }
  static PyObject* const dunder = PyUnicode_InternFromString("__dlpack__");  // process lifetime
  return class_attribute(Py_TYPE(x.ptr()), dunder) != nullptr ? Fed::kTensor : Fed::kValue;
}

// output_names: None, or anything empty, for every output (onnxruntime's `if not output_names`); else a list or a
// tuple of str (UTF-8 bytes too, as pybind11 takes them). Anything else is Malformed: onnxruntime's to judge.
void convert_names(nb::handle output_names, std::vector<std::string>& names) {
  PyObject* o = output_names.ptr();
  if (output_names.is_none()) return;
  const int empty = PyObject_Not(o);
  if (empty < 0) throw nb::python_error();
  if (empty == 1) return;
  if (!PyList_Check(o) && !PyTuple_Check(o)) {
    throw Malformed{std::string("output_names must be a list or a tuple of str or None, not ") + type_name(o)};
  }
  for (nb::handle n : output_names) {
    if (PyUnicode_Check(n.ptr())) {
      names.push_back(nb::cast<std::string>(n));
    } else if (PyBytes_Check(n.ptr())) {
      const nb::object text = nb::steal(PyUnicode_FromEncodedObject(n.ptr(), "utf-8", "strict"));
      if (!text.is_valid()) throw nb::python_error();
      names.push_back(nb::cast<std::string>(text));
    } else {
      throw Malformed{std::string("output_names[...] must be str, not ") + type_name(n.ptr())};
    }
  }
}

}  // namespace

std::string str_of(nb::handle h, const char* what) {
  if (!PyUnicode_Check(h.ptr())) {
    throw nb::type_error((std::string(what) + " must be str, not " + type_name(h.ptr())).c_str());
  }
  return nb::cast<std::string>(h);
}

void convert(const Session* session, const RunArguments& a, Request& r) {
  RunRequest& run = r.run;
  if (!a.in_place.is_none()) {
    for_items(a.in_place, "in_place", "output", false, [&](std::string name, nb::handle input) {
      run.options.in_place.emplace_back(std::move(name), str_of(input, "in_place's values (input names)"));
    });
  }
  // A feed ORT writes in place must be the caller's memory itself: never a copy.
  const auto written = [&](const std::string& name) {
    for (const auto& pair : run.options.in_place) {
      if (pair.second == name) return true;
    }
    return false;
  };
  if (a.takes_values && !PyDict_Check(a.feeds.ptr()) && !onnxruntime_takes_iterables()) {
    throw Malformed{std::string(a.feeds_argument) + " must be a dict"};  // (onnxruntime's run says it its own way)
  }
  for_items(a.feeds, a.feeds_argument, "input", true, [&](std::string name, nb::handle x) {
    if (!r.first_feed.is_valid()) r.first_feed = x;
    const Fed fed = a.takes_values && !written(name) ? classify(session, name, x) : Fed::kTensor;
    if (fed != Fed::kTensor) {
      run.values.push_back(FedValue{std::move(name), fed == Fed::kArray});
      r.values.push_back(nb::borrow(x));
    } else if (!a.takes_values && session != nullptr && is_list_or_scalar(x)) {
      run.feeds.emplace_back(name, list_as_tensor(*session, name, x));
    } else {
      const bool bound = a.binds || written(name);
      run.feeds.emplace_back(std::move(name),
                             bound ? bound_feed(x) : import_any(x, nb::none(), nb::none(), "the tensor"));
      if (a.binds) {
        r.bound.push_back(Request::Bound{run.feeds.size() - 1, false, nb::borrow(x),
                                         memory_may_move(framework_of_type(Py_TYPE(x.ptr())))});
      }
    }
  });
  convert_names(a.output_names, run.output_names);
  if (!a.outputs.is_none()) {
    // Destinations are written in place: never a copy (BufferError).
    for_items(a.outputs, "outputs", "output destination", false, [&](std::string name, nb::handle x) {
      refuse_if_autograd_tracks(x);
      run.options.destinations.emplace_back(std::move(name),
                                            import_any(x, nb::none(), nb::borrow(Py_False), "the tensor"));
      if (a.binds) {
        r.bound.push_back(Request::Bound{run.options.destinations.size() - 1, true, nb::borrow(x),
                                         memory_may_move(framework_of_type(Py_TYPE(x.ptr())))});
      }
    });
  }
  run.options.output_target = to_target(a.device, "device");
  const Framework named = a.output_type.is_none() ? a.default_output : to_output_type(a.output_type, "output_type");
  if (named == Framework::kLikeFeeds) {
    r.output = r.first_feed.is_valid() ? framework_of(r.first_feed) : OutputFramework{Framework::kNumpy, nullptr};
  } else {
    r.output = OutputFramework{named, nullptr};
  }
  run.reader = Reader{r.output.framework, named == Framework::kLikeFeeds};
}

Tensor value_as_tensor(const Session& session, const Request& r, size_t index) {
  nb::handle x = r.values[index];
  if (is_list_or_scalar(x)) return list_as_tensor(session, r.run.values[index].name, x);
  return import_any(x, nb::none(), nb::none(), "the tensor");
}

}  // namespace ortdlpack::py
