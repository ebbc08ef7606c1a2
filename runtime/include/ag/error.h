// The error hierarchy (docs/api.md, "Errors") and source locations carried by graph nodes.
#pragma once

#include <cstdint>
#include <source_location>
#include <stdexcept>
#include <string>

namespace ag {

// Where a traced op, a staged construct or an error comes from. `file` has static storage
// (a string literal or std::source_location's file name).
struct SourceLoc {
  const char* file = nullptr;
  uint32_t line = 0;

  constexpr SourceLoc() = default;
  constexpr SourceLoc(const char* f, uint32_t l) : file(f), line(l) {}
  constexpr SourceLoc(const std::source_location& s)  // NOLINT: implicit on purpose
      : file(s.file_name()), line(s.line()) {}
  bool known() const { return file != nullptr && line != 0; }
  // "file.cpp:12" (basename only), or "" when unknown.
  std::string str() const;
};

// Emitted by ag-rewrite in front of every converted construct.
#define AG_SOURCE_LOC(file, line) (::ag::SourceLoc{file, line})

// Base of every error agc raises because of its user's program or data.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A dtype is wrong (mixed dtypes, float with an integer op, a signature's dtype).
class TypeError : public Error {
 public:
  using Error::Error;
};
// A shape or a signature is wrong.
class ValueError : public Error {
 public:
  using Error::Error;
};
// Run-time data is wrong: an index out of range, an integer division by zero.
class InvalidArgumentError : public Error {
 public:
  using Error::Error;
};
// Memory ran out: a tensor could not be allocated, eagerly, in the graph interpreter or in
// compiled code (TensorFlow's ResourceExhaustedError, "OOM when allocating tensor"). The call
// that raised it released what it had allocated; the process and the Function go on working.
class ResourceExhaustedError : public Error {
 public:
  using Error::Error;
};
// A wait ran out (TensorFlow's DeadlineExceededError): another process did not join a collective
// within the timeout (docs/distributed.md, "Failures") -- it died, hangs, or runs other code.
class DeadlineExceededError : public Error {
 public:
  using Error::Error;
};
// A staging rule is broken (docs/guide.md, "The staging rules"), or control flow on a symbolic tensor was not
// converted by ag-rewrite.
class ConversionError : public Error {
 public:
  using Error::Error;
};
// The program is valid but asks for something agc does not do yet (TensorFlow's
// UnimplementedError): for example the gradient of an op whose gradient rule is missing. The
// message names what and where.
class UnimplementedError : public Error {
 public:
  using Error::Error;
};
// A bug in agc itself. Deliberately not an ag::Error: code that handles user errors must not
// swallow these.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace ag
