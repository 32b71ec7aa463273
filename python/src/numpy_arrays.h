// numpy's C API, used in numpy_arrays.cc only: Tensor.__array__, arrays over host memory, what numpy makes of an
// object, ml_dtypes arrays as DLPack tensors.
#pragma once

#include "tensors.h"

namespace ortdlpack::py {

// Imports numpy's C API (before any other function of the file) and binds Tensor.__array__ and Tensor.numpy().
void define_numpy(nb::class_<PyTensor>& cls);
// A numpy array over host memory `t` (owned by the Python object `owner`), without copying, except for packed
// sub-byte types, which numpy (ml_dtypes) holds one element per byte: then only when `copy` allows.
nb::object host_array(const Tensor& t, nb::handle owner, CopyMode copy);
// A numpy array over host memory `t`, which it keeps alive.
nb::object array_of(const Tensor& t);
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

}  // namespace ortdlpack::py
