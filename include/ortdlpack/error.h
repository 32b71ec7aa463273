// ortdlpack: the one exception type of the library.
//
// Every failure, whether ORT returned an OrtStatus or a DLPack field failed validation, leaves the library as an
// ortdlpack::Error. The kind tells a binding which language-level error to raise; the Python package maps
// kInvalidArgument -> ValueError, kUnsupported/kCopyRequired -> BufferError, kRuntime -> RuntimeError
// (Array API standard rules for DLPack).
#pragma once

#include <stdexcept>
#include <string>

namespace ortdlpack {

enum class ErrorKind {
  kInvalidArgument,  // a malformed argument or DLPack field (NULL, negative dim, overflow, bad flags combination)
  kUnsupported,      // well-formed, but this dtype/device/layout cannot be exchanged as asked
  kCopyRequired,     // the exchange needs a copy and the caller did not allow one
  kRuntime,          // ORT reported an error (allocation, data transfer, session run, ...)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace ortdlpack
