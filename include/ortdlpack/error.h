// ortdlpack: the one exception type of the library.
//
// Every failure, whether ORT returned an OrtStatus or a DLPack field failed validation, leaves the library as an
// ortdlpack::Error. The kind tells a front end which language-level error to raise; the Python package maps
// kInvalidArgument -> ValueError, kUnsupported -> BufferError, kCopyRequired -> CopyRequiredError (both ValueError and
// BufferError), kRuntime -> RuntimeError (Array API standard rules for DLPack). A failure ORT reports, or one ortdlpack
// finds first where ORT would report it too (an unknown input name), also carries ORT's error code, so a front end can
// raise what ORT's own Python raises for it (onnxruntime's InvalidArgument, Fail, ... classes).
#pragma once

#include <onnxruntime_c_api.h>

#include <stdexcept>
#include <string>

namespace ortdlpack {

enum class ErrorKind {
  kInvalidArgument,  // a malformed argument or DLPack field (NULL, negative dim, overflow, bad flags combination)
  kUnsupported,      // well-formed, but this dtype/device/layout cannot be exchanged as asked
  kCopyRequired,     // the exchange needs a copy and the caller did not allow one
  kRuntime,          // ORT reported an error (allocation, data transfer, session run, ...)
};

/// \brief The kind of a failure ORT reports with `code`: invalid arguments, models and files are kInvalidArgument,
/// what ORT does not implement kUnsupported, everything else kRuntime. The one table of it.
ErrorKind error_kind(OrtErrorCode code) noexcept;

class Error : public std::runtime_error {
 public:
  /// \brief A failure of ortdlpack's own (no ORT error code).
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  /// \brief A failure ORT reports with `code` (from an OrtStatus), or one ORT would report with it; its kind is
  /// error_kind(code).
  Error(OrtErrorCode code, const std::string& message)
      : std::runtime_error(message), kind_(error_kind(code)), ort_code_(code) {}

  /// \brief The kind of failure (what a binding maps to its error classes).
  ErrorKind kind() const noexcept { return kind_; }
  /// \brief ORT's error code for this failure, ORT_OK when ORT has no part in it.
  OrtErrorCode ort_code() const noexcept { return ort_code_; }
  /// \brief The same failure (kind and code) with another message: context added where it is rethrown.
  Error reworded(const std::string& message) const {
    Error e(*this);
    static_cast<std::runtime_error&>(e) = std::runtime_error(message);
    return e;
  }

 private:
  ErrorKind kind_;
  OrtErrorCode ort_code_ = ORT_OK;
};

}  // namespace ortdlpack
