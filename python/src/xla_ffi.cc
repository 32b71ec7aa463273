// The XLA FFI handler behind ortdlpack.jax_function: XLA calls it inside a compiled computation with its own buffers,
// and it runs a compiled session (compiled_sessions.h) on them: every argument imported as a read-only feed and every
// result as a destination ORT writes in place (the core's import, Session::run and RunOptions::destinations), so no
// byte is copied and nothing crosses into Python. The output shapes XLA allocated are those ShapeRules derived at
// trace time; the core checks them again against the model before ORT runs.
//
// On CUDA, XLA's buffers are ordered by its stream, the run's caller's stream (RunOptions::stream): the core has
// the run wait for what XLA queued there and XLA's later work wait for the outputs (docs/streams.md rule 6).
#include <xla/ffi/api/ffi.h>

#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "errors.h"
#include "registrations.h"
#include "tensors.h"

namespace ffi = xla::ffi;

namespace ortdlpack::py {
namespace {

// XLA's element type as DLPack's, through the core's dtype table (dtype_from_xla).
DLDataType dlpack_dtype(ffi::DataType type) {
  const ONNXTensorElementDataType onnx = dtype_from_xla(static_cast<int>(type));
  if (onnx == ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED) {
    throw Error(ErrorKind::kUnsupported,
                "jax_function: XLA element type " + std::to_string(static_cast<int>(type)) +
                    " is not supported (XLA-only types; the 4-bit types, whose buffers XLA sizes one "
                    "element per byte)");
  }
  return to_dlpack_dtype(onnx);
}

// A DLPack tensor over one XLA buffer, owned by XLA for the whole call: its deleter does nothing.
struct BufferView {
  DLManagedTensorVersioned managed{};
};

// Imports `buffer` as a Tensor over XLA's memory (read-only for an argument). `view` must outlive the Tensor.
Tensor import_buffer(const ffi::AnyBuffer& buffer, DLDevice device, bool read_only, BufferView& view) {
  DLManagedTensorVersioned& m = view.managed;
  m.version = {DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
  m.deleter = [](DLManagedTensorVersioned*) {};
  m.flags = read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
  const ffi::AnyBuffer::Dimensions dims = buffer.dimensions();
  m.dl_tensor.data = buffer.untyped_data();
  m.dl_tensor.device = device;
  m.dl_tensor.ndim = static_cast<int32_t>(dims.size());
  m.dl_tensor.dtype = dlpack_dtype(buffer.element_type());
  m.dl_tensor.shape = const_cast<int64_t*>(dims.begin());
  m.dl_tensor.strides = nullptr;  // XLA's FFI buffers are dense, row-major
  m.dl_tensor.byte_offset = 0;
  return ortdlpack::from_dlpack(&m).tensor;
}

// Runs compiled session `id` on XLA's buffers. `stream`: XLA's stream on a device with one (nullopt on the host).
ffi::Error run(uint64_t id, ffi::RemainingArgs args, ffi::RemainingRets rets, DLDevice device,
               std::optional<uintptr_t> stream) {
  try {
    const std::shared_ptr<const CompiledSession> entry = compiled_session(id);
    Session& session = entry->session;
    check_positional(session.inputs(), args.size());
    if (rets.size() != session.outputs().size()) {
      throw Error(ErrorKind::kInvalidArgument, "jax_function: the call has " + std::to_string(rets.size()) +
                                                   " results for a model of " +
                                                   std::to_string(session.outputs().size()) + " outputs");
    }
    std::vector<BufferView> views(args.size() + rets.size());  // outlive the Tensors below
    Feeds feeds;
    RunOptions options;
    options.stream = stream;
    for (size_t i = 0; i < args.size(); ++i) {
      const ffi::ErrorOr<ffi::AnyBuffer> b = args.get<ffi::AnyBuffer>(i);
      if (b.has_error()) return b.error();
      feeds.emplace_back(session.inputs()[i].name, import_buffer(*b, device, true, views[i]));
    }
    for (size_t k = 0; k < rets.size(); ++k) {
      ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> b = rets.get<ffi::AnyBuffer>(k);
      if (b.has_error()) return b.error();
      options.destinations.emplace_back(session.outputs()[k].name,
                                        import_buffer(**b, device, false, views[args.size() + k]));
    }
    session.run(feeds, {}, options);
    return ffi::Error::Success();
  } catch (const Error& e) {
    return ffi::Error(static_cast<ffi::ErrorCode>(xla_error_code(e.kind())), e.what());
  } catch (const std::exception& e) {
    return ffi::Error::Internal(e.what());
  }
}

ffi::Error run_on_host(uint64_t id, ffi::RemainingArgs args, ffi::RemainingRets rets) {
  return run(id, args, rets, DLDevice{kDLCPU, 0}, std::nullopt);
}

ffi::Error run_on_cuda(void* stream, int32_t ordinal, uint64_t id, ffi::RemainingArgs args, ffi::RemainingRets rets) {
  return run(id, args, rets, DLDevice{kDLCUDA, ordinal}, reinterpret_cast<uintptr_t>(stream));
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(ortdlpack_run_host, run_on_host,
                              ffi::Ffi::Bind().Attr<uint64_t>("session").RemainingArgs().RemainingRets());
XLA_FFI_DEFINE_HANDLER_SYMBOL(ortdlpack_run_cuda, run_on_cuda,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<void*>>()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Attr<uint64_t>("session")
                                  .RemainingArgs()
                                  .RemainingRets());

}  // namespace

void define_xla_ffi(nb::module_& m) {
  m.def(
      "_xla_ffi_handlers",
      [] {
        nb::dict d;
        d["cpu"] = nb::capsule(reinterpret_cast<void*>(&ortdlpack_run_host));
        d["CUDA"] = nb::capsule(reinterpret_cast<void*>(&ortdlpack_run_cuda));
        return d;
      },
      nb::sig("def _xla_ffi_handlers() -> dict"),
      "The XLA FFI handlers of ortdlpack_run by platform, as capsules for jax.ffi.register_ffi_target.");
}

}  // namespace ortdlpack::py
