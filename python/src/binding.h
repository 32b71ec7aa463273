// _ortdlpack: what the binding's source files share. The binding is a thin layer: every DLPack, dtype, device and
// copy decision is the C++ core's (include/ortdlpack); this layer only speaks Python (capsules, arguments, errors).
#pragma once

#include <Python.h>
#include <dlpack/dlpack.h>
#include <nanobind/nanobind.h>
// In every file: nb::cast<std::string> instantiated without its caster throws std::bad_cast, and the linker keeps one
// instantiation for all files.
#include <nanobind/stl/string.h>

#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "onnxruntime_devices.h"
#include "onnxruntime_sessions.h"

#include "binding_adapter.h"
#include "ortdlpack/ortdlpack.h"

namespace nb = nanobind;

namespace ortdlpack::py {

// The name of an object's type, for error messages (the abi3 build's limited API has no PyTypeObject::tp_name).
inline std::string type_name(PyObject* obj) {
  return nb::type_name(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(obj)))).c_str();
}

// Cyclic GC for a bound type T that holds Python objects: T::references(f) calls f(nb::object&) on every one it
// holds, and the type is made with nb::type_slots(Gc<T>::slots), so a cycle through it (a binding stored on its own
// session, ...) is collected: traverse visits them, clear drops them. A method of T called after clear (a finalizer
// in the same cycle) finds them invalid: what T holds in C++ must not depend on them (a Binding's session is kept
// alive by the core).
template <class T>
struct Gc {
  static int traverse(PyObject* self, visitproc visit, void* arg) {
    Py_VISIT(reinterpret_cast<PyObject*>(Py_TYPE(self)));  // a heap type's instances own a reference to it
    if (!nb::inst_ready(self)) return 0;
    int result = 0;
    nb::inst_ptr<T>(self)->references([&](nb::object& o) {
      if (result == 0 && o.is_valid()) result = visit(o.ptr(), arg);
    });
    return result;
  }
  static int clear(PyObject* self) {
    if (nb::inst_ready(self)) {
      nb::inst_ptr<T>(self)->references([](nb::object& o) { nb::object dropped = std::move(o); });
    }
    return 0;
  }
  static inline PyType_Slot slots[] = {{Py_tp_traverse, reinterpret_cast<void*>(&traverse)},
                                       {Py_tp_clear, reinterpret_cast<void*>(&clear)},
                                       {0, nullptr}};
};

// The Python object behind ortdlpack.Tensor.
struct PyTensor {
  explicit PyTensor(Tensor t) noexcept : tensor(std::move(t)) {}
  PyTensor(const PyTensor&) = delete;
  PyTensor& operator=(const PyTensor&) = delete;
  PyTensor(PyTensor&& other) noexcept : tensor(std::move(other.tensor)), view(other.view) { other.view = nullptr; }
  ~PyTensor() {
    if (view != nullptr) view->deleter(view);
  }

  Tensor tensor;
  // An export of `tensor` made once, on first use by the C exchange API's dltensor_from_py_object_no_sync, which
  // must hand out shape and strides without allocating: they live here as long as the Python object.
  DLManagedTensorVersioned* view = nullptr;
};

// module.cc -----------------------------------------------------------------------------------------------------------
// Whether Python objects may still be touched from a C callback (a deleter, the EP package finder): false once the
// interpreter began to exit (atexit ran; the limited API has no Py_IsFinalizing before 3.13).
bool python_alive() noexcept;

// errors.cc -----------------------------------------------------------------------------------------------------------
void bind_errors(nb::module_& m);
// The Python exception type for an ortdlpack::Error kind (kCopyRequired: ortdlpack.CopyRequiredError, both
// ValueError and BufferError), and its name as DLPackExchangeAPI's set_error takes it.
PyObject* exception_type(ErrorKind kind);
const char* exception_name(ErrorKind kind);
// The error code (XLA_FFI_Error_Code) XLA's FFI reports an ortdlpack::Error kind with.
int xla_error_code(ErrorKind kind);
// In a C entry point (exchange API): turns the exception being handled into a Python error. Returns -1.
int set_python_error() noexcept;
// Raises what onnxruntime raised (`e`) on: an exception of one of onnxruntime's classes as ortdlpack's class for the
// same ORT error code (an instance of both: ortdlpack.errors), same message, `e` as its cause; anything else as it is.
[[noreturn]] void raise_onnxruntime_error(nb::python_error& e);
// Raises a malformed call's error as an instance of ortdlpack's class (TypeError) and of onnxruntime's for the same
// call: feeds that are no mapping (AttributeError: onnxruntime reads input_feed.keys()), a feed key that is no str
// (ValueError: onnxruntime finds the input missing).
enum class CallShape { kFeedsNoMapping, kFeedKeyNoStr };
[[noreturn]] void call_shape_error(CallShape what, const std::string& message);
// Whether `type` is onnxruntime's (or ortdlpack's) exception class for ORT error `code`.
bool is_onnxruntime_error(nb::handle type, OrtErrorCode code);
// Where the binding tries another route after a Python call failed (an attribute a producer lacks, a call form it
// refuses, a value it cannot convert): the error is cleared when it is an Exception; anything else (KeyboardInterrupt,
// SystemExit, GeneratorExit) is never taken for "try another route": it propagates unchanged, as nb::python_error.
// clear_exception() for the error being raised (nothing raised: nothing to do), only_exceptions(e) for a caught one
// (rethrows it unless it is an Exception; call it inside the handler).
inline void clear_exception() {
  if (PyErr_Occurred() != nullptr && PyErr_ExceptionMatches(PyExc_Exception) == 0) throw nb::python_error();
  PyErr_Clear();
}
inline void only_exceptions(const nb::python_error& e) {
  if (!e.matches(PyExc_Exception)) throw;
}
// PyObject_HasAttrString without taking an interrupt for "no": whether getattr(obj, name) succeeds (clear_exception).
inline bool has_attribute(nb::handle obj, const char* name) {
  PyObject* value = PyObject_GetAttrString(obj.ptr(), name);
  if (value == nullptr) {
    clear_exception();
    return false;
  }
  Py_DECREF(value);
  return true;
}
// The one wrapper of every C entry point (CPython methods, the exchange API, ORT's callbacks): runs `f` and returns
// its value, or turns any exception into a Python error and returns `failed`.
template <class R, class F>
R safe_call(R failed, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    set_python_error();
    return failed;
  }
}

// device.cc -----------------------------------------------------------------------------------------------------------
// ortdlpack.Device is the core's Target (placement.h), of kind kDevice (a DLPack device) or kMemory (the exact memory
// of an EP device): the one "where" type from the core to the binding.
// Accepts a Device, "cpu", "cuda:0", a (dl_device_type, id) tuple and an onnxruntime.OrtEpDevice. TypeError for
// other types, ValueError for unknown names and out-of-range values, both naming the argument `what`.
Target to_device(nb::handle spec, const char* what);
// The DLPack device a Device names (an EP device's: its memory's).
DLDevice dl_device_of(const Target& device);
// The env's OrtEpDevice behind an onnxruntime.OrtEpDevice (which exposes no pointer), found again by the core.
const OrtEpDevice* ep_device_of(nb::handle ep);
// A device argument that may be None: None -> Target::anywhere(), else to_device.
Target to_target(nb::handle spec, const char* what);
// An integer argument (anything with __index__): TypeError for other types, ValueError outside [min, max], both
// naming the argument `what`.
long long to_integer(nb::handle h, const char* what, long long min = INT64_MIN, long long max = INT64_MAX);
nb::object make_device(DLDevice dl);
void bind_device(nb::module_& m);

// capsules.cc --------------------------------------------------------------------------------------------------------
// Tensor.__dlpack__: a versioned or legacy capsule, placed at dl_device and ordered for the consumer's `stream`.
nb::object tensor_dlpack(nb::handle self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy);
// A legacy "dltensor" capsule over a versioned export (legacy_view, export.h), for legacy-only consumers such as
// onnxruntime's OrtValue.from_dlpack: read-only and packed sub-byte tensors pass too.
nb::object legacy_capsule_over(DLManagedTensorVersioned* inner);
// An unconsumed DLPack capsule whose tensor onnxruntime's OrtValue.from_dlpack reads as it is (py::is_plain) as the
// legacy capsule it takes (a versioned one consumed into legacy_capsule_over); an invalid object for any other.
nb::object plain_legacy_capsule(nb::handle capsule);
// Imports a DLPack capsule placed at `target`: the Tensor owns its tensor and the capsule is renamed used_* (on failure
// the capsule still owns it). `immutable`: its producer's arrays are (immutable_producer).
Tensor import_capsule(PyObject* capsule, CopyMode copy, const Target& target, bool immutable = false);
// Imports a DLPack tensor handed to the binding (from a C exchange API or an export of its own), placed at `target`:
// the Tensor owns it, or, if the import fails, its deleter has run (the one free-on-failure rule of the binding).
Tensor import_owned(DLManagedTensorVersioned* m, CopyMode copy, const Target& target);

// from_dlpack.cc ------------------------------------------------------------------------------------------------------
// What from_dlpack imports, as a core Tensor (no Python object made), its producer asked once. `what` names `x` in
// the TypeError for an object that is no DLPack tensor. JAX arrays and TensorFlow tensors, immutable by contract,
// import read-only.
Tensor import_any(nb::handle x, nb::handle device, nb::handle copy, const char* what);
void bind_dlpack(nb::module_& m);

// ortvalue.cc ---------------------------------------------------------------------------------------------------------
// The onnxruntime.OrtValue boundary, through what the installed onnxruntime has (1.23 on).
bool is_ortvalue(nb::handle x);
// onnxruntime.OrtValue over an unconsumed legacy capsule (bool told to onnxruntime < 1.32 its own way).
nb::object ortvalue_from_capsule(nb::handle capsule);
// An onnxruntime.OrtValue sharing `t`'s memory and keeping it alive, complete (work pending on it is waited for: the
// value's readers order nothing). BufferError for memory it cannot wrap (CPU, CUDA and ROCm only).
nb::object ortvalue_of(const Tensor& t);
// An unconsumed legacy capsule of an onnxruntime.OrtValue's tensor, bool tensors typed kDLBool.
nb::object capsule_of_ortvalue(nb::handle ortvalue);

// producer_types.cc ---------------------------------------------------------------------------------------------------
// A class attribute of `type` (found along its MRO), borrowed, or nullptr; never keeps `type` alive, raises only what
// clear_exception propagates (a metaclass's descriptor interrupted).
PyObject* class_attribute(PyTypeObject* type, PyObject* name);
// The name of the module that defines `type` ("" when it says none), and whether it is package `top` or in it.
std::string module_of(PyTypeObject* type);
bool in_package(const std::string& module, const char* top);
// The framework whose package defines `type` (subclasses such as torch.nn.Parameter included), told by its module
// without importing any framework; kOther for anything else.
enum class Framework { kOther, kTorch, kNumpy, kOnnxruntime, kCupy, kJax, kTensorflow };
Framework framework_of_type(PyTypeObject* type);
// Whether `type`'s arrays are immutable by contract though their capsules carry no READ_ONLY flag: JAX arrays and
// TensorFlow tensors (ImportOptions::read_only).
bool immutable_producer(PyTypeObject* type);
// `module`.`name` (a type, a function), imported on first use and kept for the process's life (modules are not
// unloaded): the one way the binding caches what it calls or checks of another package. Borrowed.
PyObject* module_attribute(const char* module, const char* name);
// The same for a type: `static PyTypeObject* const t = module_type("onnxruntime", "RunOptions");`.
PyTypeObject* module_type(const char* module, const char* name);

// exchange_api.cc -----------------------------------------------------------------------------------------------------
// The DLPackExchangeAPI of `type` (its __dlpack_c_exchange_api__ class attribute), or NULL. Keeps no reference.
const DLPackExchangeAPI* exchange_api_of(PyTypeObject* type);
void bind_exchange_api(nb::handle tensor_type);

// tensor.cc -----------------------------------------------------------------------------------------------------------
void bind_tensor(nb::module_& m);
// The shape of `t` as a tuple of ints.
nb::object shape_tuple(const Tensor& t);
// The Python type object of ortdlpack.Tensor (set once by bind_tensor).
PyTypeObject* tensor_type();
inline bool is_tensor(nb::handle h) {
  return Py_TYPE(h.ptr()) == tensor_type() || PyObject_TypeCheck(h.ptr(), tensor_type());
}
inline PyTensor& tensor_of(nb::handle h) { return *nb::inst_ptr<PyTensor>(h); }
// A new Python ortdlpack.Tensor owning `t`.
nb::object wrap(Tensor t);
// copy=None/True/False (TypeError for anything else).
CopyMode to_copy_mode(nb::handle copy);
// The CopyRunner (placement.h) of every core call that may copy: the copy runs with the GIL released.
void run_without_gil(const std::function<void()>& copy);
// order_for_consumer (stream.h) as the binding calls it: with the GIL released when `t` is in device memory (the
// order may wait on the host); host memory only checks `consumer`.
void order_for_consumer_without_gil(const Tensor& t, std::optional<int64_t> consumer);

// numpy_arrays.cc -----------------------------------------------------------------------------------------------------
// Imports numpy's C API (before any other function of the file) and binds Tensor.__array__ and Tensor.numpy().
void bind_numpy(nb::class_<PyTensor>& cls);
// A numpy array over host memory `t` (owned by the Python object `owner`), without copying, except for packed
// sub-byte types, which numpy (ml_dtypes) holds one element per byte: then only when `copy` allows.
nb::object host_array(const Tensor& t, nb::handle owner, CopyMode copy);
// A numpy array over the host memory of a DLPack tensor of a dtype numpy has (py::numpy_has), which it owns:
// its deleter runs when numpy lets the array go (also when making the array fails).
nb::object numpy_over(DLManagedTensorVersioned* m);
// The numpy dtype of an element type (ml_dtypes' for bfloat16, float8, int4, ...).
nb::object numpy_dtype_of(ONNXTensorElementDataType type);
// What numpy makes of an object, as onnxruntime's run reads feeds: not numpy's; a scalar (numpy's or Python's: no
// array); an array onnxruntime's run takes as it is (bool, integers, floats); an array of strings, bytes or objects
// (no DLPack form: onnxruntime's run takes them as string tensors); an array of a user-defined dtype (ml_dtypes').
enum class NumpyKind { kNone, kScalar, kNative, kStrings, kOther };
NumpyKind numpy_kind(nb::handle x);
// The bytes a numpy array's elements occupy, [begin, end); empty for anything else and for an empty array.
struct ByteRange {
  const char* begin = nullptr;
  const char* end = nullptr;
  bool overlaps(const ByteRange& o) const noexcept { return begin < o.end && o.begin < end; }
};
ByteRange array_bytes(nb::handle x);
// The element type of a numpy array of an ml_dtypes type the dtype table has (bfloat16, float8, int4, ...), which
// numpy's own __dlpack__ refuses; UNDEFINED for any other object.
ONNXTensorElementDataType numpy_extension_type(nb::handle x);
// Such an array as a DLPack tensor over its memory that holds a reference to it (sub-byte types one element per byte:
// IS_SUBBYTE_TYPE_PADDED; READ_ONLY for an array numpy says is). NULL for any other object.
DLManagedTensorVersioned* numpy_extension_export(nb::handle x);

// output_frameworks.cc ------------------------------------------------------------------------------------------------
// output_type=: the framework a run's outputs are made in (ortdlpack.Tensor, torch, numpy, cupy, jax, or that of the
// feeds: framework_of the first feed; kForeign: a feed's own framework through its package's from_dlpack).
enum class OutputType { kTensor, kTorch, kNumpy, kCupy, kJax, kLikeFeeds, kForeign };
// What a run's outputs are made as: an output type, with, for kForeign, the importer (the feeds' package's
// from_dlpack: a module attribute, kept for the process's life like every module_attribute).
struct OutputFramework {
  OutputFramework(OutputType t = OutputType::kTensor, PyObject* from_dlpack = nullptr) noexcept
      : type(t), importer(from_dlpack) {}
  bool operator==(OutputType t) const noexcept { return type == t; }
  bool operator!=(OutputType t) const noexcept { return type != t; }
  OutputType type;
  PyObject* importer;
};
// "ortdlpack", "torch", "numpy", "cupy", "jax", "like_feeds" (not None): TypeError/ValueError naming `what`.
OutputType to_output_type(nb::handle spec, const char* what);
// The framework of a feed: torch, numpy (lists and scalars too: they become numpy arrays), cupy, jax, the framework
// of any other DLPack producer whose package has a from_dlpack (paddle, tvm_ffi, ...), else Tensor.
OutputFramework framework_of(nb::handle feed);
// Whether outputs of that type must be allocated in host memory (numpy).
bool needs_host(const OutputFramework& f);
// Error(kUnsupported) when the framework has no dtype for the element type (torch: sub-byte types).
void check_framework_holds(const OutputFramework& f, ONNXTensorElementDataType element_type);
// `t` as an object of the framework (kTensor, kLikeFeeds: an ortdlpack.Tensor), sharing its memory.
nb::object to_framework(const Tensor& t, const OutputFramework& f);
nb::object to_frameworks(const std::vector<Tensor>& tensors, const OutputFramework& f);
// Orders `t`, in memory the host cannot read, before the work torch's current stream (the caller's) queues next.
void order_for_torch(const Tensor& t);

// onnxruntime_options.cc ----------------------------------------------------------------------------------------------
// TypeError "`what` must be an onnxruntime.`type` or None, not ..." unless `x` is one (`type`: "SessionOptions",
// "RunOptions").
void check_onnxruntime_options_type(nb::handle x, const char* type, const char* what);
// The ORT struct behind an onnxruntime.SessionOptions (type checked by the caller) / onnxruntime.RunOptions (type
// checked here), borrowed: valid while the Python object lives. ValueError naming `what` when the installed
// onnxruntime does not hand it out (pybind11's conduit); `hint` ends that message.
const OrtSessionOptions* onnxruntime_session_options(nb::handle options, const char* what, const char* hint);
const OrtRunOptions* onnxruntime_run_options(nb::handle options, const char* what);
// The OrtSession behind an InferenceSession's C session (its `_sess`), or NULL where this onnxruntime does not hand it
// out as ortdlpack knows it (pybind11's conduit and the layout of onnxruntime 1.23-1.32, checked).
OrtSession* onnxruntime_session(nb::handle c_session);

// session_providers.cc ------------------------------------------------------------------------------------------------
// The (key, value) pairs of a dict[str, str] argument (None: none); TypeError naming `what` otherwise.
std::vector<std::pair<std::string, std::string>> string_pairs(nb::handle dict, const char* what);
// Provider options as onnxruntime takes them (providers=' options, ep_options=): a dict of names to str, bool
// ("1"/"0"), int or float values, each as ORT's string. TypeError naming `what` for anything else.
std::vector<std::pair<std::string, std::string>> option_pairs(nb::handle dict, const std::string& what);
// onnxruntime's providers=[name or (name, options)] and provider_options=[options, ...] (one per provider), as the
// core's providers (which checks the names).
std::vector<Provider> to_providers(nb::handle providers, nb::handle provider_options);
// The OrtSessionOptions behind an onnxruntime.SessionOptions (None: NULL), for the core to copy (SessionConfig::base).
const OrtSessionOptions* to_base(nb::handle sess_options);
// The (sess_options, providers, provider_options) ortdlpack.InferenceSession hands to onnxruntime's constructor.
nb::object onnxruntime_providers(nb::handle sess_options, nb::handle providers, nb::handle provider_options,
                                 nb::handle ep, nb::handle ep_options);

// session.cc ----------------------------------------------------------------------------------------------------------
// ortdlpack.Session: an OrtSession made with the C API on env() and run by ortdlpack::Session.
void bind_session(nb::module_& m);
// The core Session of an ortdlpack.Session (TypeError for any other object): valid while that object lives.
Session& core_session(nb::handle session);
// A C++ owner of a reference to `obj`, for the core to hold: released with the GIL from whichever thread drops it
// (after the interpreter's exit began, left to the interpreter).
std::shared_ptr<const void> python_reference(nb::handle obj);
// The Python Binding of a core Binding, whose session `owner` keeps alive, its outputs made as `type`.
nb::object make_binding(Binding b, nb::handle owner, const OutputFramework& type);

// compiled_sessions.cc ------------------------------------------------------------------------------------------------
// A session that compiled code names by a number (torch's custom op, XLA's FFI call): its core Session, the shape
// rules it was wrapped with, and its ortdlpack.Session (`owner`), which keeps the core Session alive. The registry
// borrows it: the Python registration (ortdlpack/_compiled.py) holds it, where the garbage collector sees that
// reference, so a torch module or jax function stored on its own session is collected with it. A run in progress
// when the registration goes takes a reference for the runs left (`owned`), released with the GIL by the last one.
struct CompiledSession {
  CompiledSession(Session& core, ShapeRules shape_rules, nb::handle owner);
  ~CompiledSession();
  CompiledSession(const CompiledSession&) = delete;
  CompiledSession& operator=(const CompiledSession&) = delete;

  Session& session;
  const ShapeRules rules;
  PyObject* owner;             // borrowed while registered; owned (`owned`) once released during a run
  mutable bool owned = false;  // (written under the registry's lock; read by the last holder's destructor)
};
// The registered session with that id, shared for the caller's run; Error(kInvalidArgument) when there is none (never
// registered, or released: ids are never reused). Callable without the GIL.
std::shared_ptr<const CompiledSession> compiled_session(uint64_t id);
void bind_compiled_sessions(nb::module_& m);

// torch_kernel.cc -----------------------------------------------------------------------------------------------------
// The kernels of torch's operator ortdlpack::run over a compiled session: _torch_run (ORT allocates the outputs) and
// _torch_run_into (into the output the caller allocated, for Inductor's generated code).
void bind_torch_kernel(nb::module_& m);

// xla_ffi.cc ----------------------------------------------------------------------------------------------------------
// The XLA FFI handlers (CPU, CUDA) that run a compiled session on XLA's buffers, as capsules for
// jax.ffi.register_ffi_target.
void bind_xla_ffi(nb::module_& m);

// testing.cc ----------------------------------------------------------------------------------------------------------
// ortdlpack._ortdlpack._testing, the test entry points: built with ORTDLPACK_PYTHON_TESTING=ON only.
void bind_testing(nb::module_& m);

// show_config.cc ------------------------------------------------------------------------------------------------------
// What ortdlpack.show_config() asks the core about the env's EP devices.
void bind_config(nb::module_& m);

// run_arguments.cc ----------------------------------------------------------------------------------------------------
// A str argument (TypeError naming `what` otherwise).
std::string str_of(nb::handle h, const char* what);
// A request converted from Python: the feeds imported as Tensors, the feeds passed to onnxruntime as they are
// (values), the output names, where outputs go and what they are made as, and its plan.
struct Request {
  Feeds feeds;
  std::vector<std::string> value_names;  // the inputs fed with values (plan_run's `values`)
  std::vector<nb::object> values;        // the values themselves, in value_names' order
  std::vector<std::string> names;
  RunOptions options;
  RunPlan plan;
  OutputFramework type;  // what the outputs are made as (output_type=, like_feeds resolved)

  template <class F>
  void references(F f) {  // (Gc)
    for (nb::object& v : values) f(v);
  }
};
// Which feeds stay Python values, passed to onnxruntime's run as they are (never for the core's Session, which
// binds tensors only): kNone — every feed is imported (lists and Python scalars first made numpy arrays of the
// input's type); kNoDlpackForm — what has no DLPack form (sequences as lists, maps as dicts, None, strings, scalars,
// anything without __dlpack__); kOnnxruntimeTakes — also numpy arrays onnxruntime's run takes as they are.
enum class Values { kNone, kNoDlpackForm, kOnnxruntimeTakes };
// Converts run()'s arguments (feeds, output_names, outputs=, device=, output_type=) into `r`, the same way for
// ortdlpack.run, ortdlpack.InferenceSession.run and ortdlpack.Session.run (and bind). `feeds_argument` names the
// feeds in errors, `hint` ends the TypeError for feeds that are no mapping. output_type None is `none_means`.
// `inputs` (and `initializers`: overridable initializers) are the model's, as the session declares them.
void convert(Request& r, const std::vector<IoInfo>& inputs, const std::vector<IoInfo>& initializers, nb::handle feeds,
             const char* feeds_argument, const char* hint, nb::handle output_names, nb::handle outputs,
             nb::handle device, nb::handle output_type, OutputType none_means, Values values);

// run.cc --------------------------------------------------------------------------------------------------------------
// ortdlpack.run, ortdlpack.InferenceSession's run() and bind(): a user's onnxruntime.InferenceSession run on the
// core's plan.
void bind_run(nb::module_& m);

}  // namespace ortdlpack::py
