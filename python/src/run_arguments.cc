// Run arguments from Python, converted the same way for ortdlpack.Session.run / bind and for ortdlpack.run: feeds and
// destinations imported as Tensors (every producer from_dlpack takes; lists and scalars as onnxruntime takes them),
// output names, where outputs go and what they are made as. The run's decisions are the core's (run_plan.h).
#include <climits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "binding.h"

namespace ortdlpack::py {
namespace {

// Adds a PEP 678 note to the exception being raised (add_note on 3.11+, __notes__ before, which tracebacks then do
// not show but which stays on the object).
void add_note(const nb::python_error& e, const std::string& note) {
  nb::handle value = e.value();
  if (nb::hasattr(value, "add_note")) {
    value.attr("add_note")(note);
    return;
  }
  nb::object notes = nb::hasattr(value, "__notes__") ? nb::object(value.attr("__notes__")) : nb::object(nb::list());
  notes.attr("append")(note);
  nb::setattr(value, "__notes__", notes);
}

// Calls `take(name, value)` for every (name, value) pair of the mapping argument `argument`; an error names the entry
// (`entry` 'name'). `hint` ends the TypeError for an argument that is no mapping.
template <class Take>
void for_items(nb::handle mapping, const char* argument, const char* entry, const char* hint, Take take) {
  const auto add = [&](nb::handle k, nb::handle v) {
    if (!PyUnicode_Check(k.ptr())) {  // (the message is made only then: this runs per feed and per run)
      call_shape_error(CallShape::kFeedKeyNoStr, std::string(argument) + " key must be str, not " + type_name(k.ptr()));
    }
    std::string name = nb::cast<std::string>(k);
    try {
      take(std::move(name), v);
    } catch (nb::python_error& e) {
      // Raised by Python code (a producer's own __dlpack__): kept as it is, class and object, with a note (an
      // interrupt propagates untouched).
      only_exceptions(e);
      add_note(e, std::string("ortdlpack: raised importing ") + entry + " '" + nb::cast<std::string>(k) + "'");
      throw;
    } catch (...) {
      // ortdlpack's own error: the same Python exception type with the entry's name in front.
      set_python_error();
      nb::python_error e;
      nb::raise_from(e, nb::borrow(e.type()), "%s '%U': %U", entry, k.ptr(), nb::str(e.value()).ptr());
    }
  };
  if (PyDict_Check(mapping.ptr())) {
    for (auto [k, v] : nb::borrow<nb::dict>(mapping)) add(k, v);
    return;
  }
  if (!PyMapping_Check(mapping.ptr()) || PyList_Check(mapping.ptr()) || PyTuple_Check(mapping.ptr()) ||
      !has_attribute(mapping, "items")) {
    call_shape_error(CallShape::kFeedsNoMapping, std::string(argument) + " must be a mapping of " + entry +
                                                     " names to tensors, not " + type_name(mapping.ptr()) + hint);
  }
  nb::object items = nb::steal(PyMapping_Items(mapping.ptr()));
  if (!items.is_valid()) throw nb::python_error();
  for (nb::handle item : items) add(item[0], item[1]);
}

// A destination torch's autograd tracks (requires_grad): ORT's write would bypass it, and torch itself refuses to
// write such a leaf in place or to export any such tensor. Asked of types that have the attribute only (no exception
// is made for others).
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

// A list or a Python scalar fed for input `io`, as onnxruntime takes lists: a numpy array of the input's declared
// element type (one copy, allowed: it is no tensor). NULL `io` (an unknown input, which the plan refuses) or an
// input without a DLPack form: numpy's own type. A list numpy cannot make such an array of is onnxruntime's
// RuntimeError for it.
nb::object as_array(nb::handle x, const IoInfo* io) {
  static PyObject* const asarray = module_attribute("numpy", "asarray");
  const bool typed = io != nullptr && io->has_dlpack_form();
  try {
    if (!typed) return nb::borrow(asarray)(x);
    return nb::borrow(asarray)(x, numpy_dtype_of(io->element_type));
  } catch (nb::python_error& e) {
    only_exceptions(e);
    throw Error(ErrorKind::kRuntime,
                std::string("Could not create tensor from given input list: numpy cannot make ") +
                    (typed ? std::string("a ") + dtype_name(io->element_type) + " array" : "an array") + " of the " +
                    type_name(x.ptr()) + " (" + nb::cast<std::string>(nb::str(e.value())) + ")");
  }
}

// Whether a feed is a DLPack producer: an ortdlpack.Tensor, a DLPack capsule, an onnxruntime.OrtValue holding a
// tensor, a numpy array of a dtype numpy exports or of an ml_dtypes type ortdlpack exports for it, or any object whose
// type has __dlpack__ (numpy arrays of strings and objects excepted, whose __dlpack__ refuses them).
bool dlpack_producer(nb::handle x, NumpyKind numpy) {
  if (is_tensor(x) || PyCapsule_CheckExact(x.ptr())) return true;
  if (numpy == NumpyKind::kOther) return numpy_extension_type(x) != ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  if (numpy != NumpyKind::kNone) return numpy == NumpyKind::kNative;
  static PyObject* const dunder = PyUnicode_InternFromString("__dlpack__");  // process lifetime
  if (class_attribute(Py_TYPE(x.ptr()), dunder) == nullptr) return false;
  return !is_ortvalue(x) ||
         (nb::cast<bool>(x.attr("is_tensor")()) && !x.attr("data_type")().equal(nb::str("tensor(string)")));
}

const IoInfo* find_input(const std::vector<IoInfo>& inputs, const std::string& name) {
  for (const IoInfo& io : inputs) {
    if (io.name == name) return &io;
  }
  return nullptr;
}

}  // namespace

std::string str_of(nb::handle h, const char* what) {
  if (!PyUnicode_Check(h.ptr())) {
    throw nb::type_error((std::string(what) + " must be str, not " + type_name(h.ptr())).c_str());
  }
  return nb::cast<std::string>(h);
}

void convert(Request& r, const std::vector<IoInfo>& inputs, const std::vector<IoInfo>& initializers, nb::handle feeds,
             const char* feeds_argument, const char* hint, nb::handle output_names, nb::handle outputs,
             nb::handle device, nb::handle output_type, OutputType none_means, Values values) {
  nb::handle first;  // the first feed (like_feeds)
  for_items(feeds, feeds_argument, "input", hint, [&](std::string name, nb::handle x) {
    if (!first.is_valid()) first = x;
    const IoInfo* io = find_input(inputs, name);
    if (io == nullptr) io = find_input(initializers, name);
    const NumpyKind numpy = numpy_kind(x);
    bool list = PyList_Check(x.ptr()) != 0;
    bool value = false;
    if (values == Values::kNone) {
      list = list || PyLong_Check(x.ptr()) || PyFloat_Check(x.ptr());  // the core's Session: made numpy arrays
    } else if (list) {
      value = values == Values::kOnnxruntimeTakes || io == nullptr || !io->has_dlpack_form();
    } else {
      // onnxruntime's run reads numpy arrays and onnxruntime.OrtValues as they are; every other tensor (torch's, on
      // the host too) is imported, for the core's executor, whose bound run costs less than onnxruntime's.
      value = (values == Values::kOnnxruntimeTakes && (numpy == NumpyKind::kNative || is_ortvalue(x))) ||
              !dlpack_producer(x, numpy);
    }
    if (value) {
      r.value_names.push_back(std::move(name));
      r.values.push_back(nb::borrow(x));
    } else {
      r.feeds.emplace_back(std::move(name),
                           import_any(list ? as_array(x, io) : nb::borrow(x), nb::none(), nb::none(), "the tensor"));
    }
  });
  r.type = output_type.is_none() ? none_means : to_output_type(output_type, "output_type");
  if (r.type == OutputType::kLikeFeeds) r.type = first.is_valid() ? framework_of(first) : OutputType::kNumpy;
  if (!output_names.is_none()) {
    // A sequence of names, as onnxruntime's run takes it (a list or a tuple, str or UTF-8 bytes each; not a str, a
    // dict or an iterator: its TypeError).
    PyObject* o = output_names.ptr();
    if (PyUnicode_Check(o) || PyBytes_Check(o) || PyDict_Check(o) || PySequence_Check(o) == 0) {
      throw nb::type_error(
          (std::string("output_names must be a sequence of str or None, not ") + type_name(o)).c_str());
    }
    const nb::object names = nb::steal(PyObject_GetIter(o));
    if (!names.is_valid()) throw nb::python_error();
    while (PyObject* n = PyIter_Next(names.ptr())) {
      const nb::object name = nb::steal(n);
      if (PyBytes_Check(n)) {
        const nb::object text = nb::steal(PyUnicode_FromEncodedObject(n, "utf-8", "strict"));
        if (!text.is_valid()) throw nb::python_error();
        r.names.push_back(nb::cast<std::string>(text));
      } else {
        r.names.push_back(str_of(name, "output_names[...]"));
      }
    }
    if (PyErr_Occurred()) throw nb::python_error();
  }
  if (!outputs.is_none()) {
    // Destinations are written in place: never a copy (BufferError).
    for_items(outputs, "outputs", "output destination", "", [&](std::string name, nb::handle x) {
      refuse_if_autograd_tracks(x);
      r.options.destinations.emplace_back(std::move(name),
                                          import_any(x, nb::none(), nb::borrow(Py_False), "the tensor"));
    });
  }
  r.options.output_target = to_target(device, "device");
  r.options.read_on_host = needs_host(r.type);  // numpy: ORT copies a device output to the host itself
}

}  // namespace ortdlpack::py
