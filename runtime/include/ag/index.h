// The index types of NumPy-style indexing (ag/indexing.h): x(ag::Slice{1, -1}, ag::all, 0,
// ag::newaxis) and x.at(...).set(v). Included by tensor.h, whose operator() and at() take them.
#pragma once

#include <concepts>
#include <cstdint>
#include <source_location>
#include <type_traits>

namespace ag {

// The open end of a Slice: Slice{ag::none, 3} is [:3].
struct None {};
inline constexpr None none{};

// One bound of a Slice: an index (negative counts from the end) or none.
class SliceBound {
 public:
  constexpr SliceBound(None) {}  // NOLINT: implicit on purpose
  template <std::integral T>
    requires(!std::is_same_v<T, bool>)
  constexpr SliceBound(T v) : value_(static_cast<int64_t>(v)), set_(true) {}  // NOLINT
  constexpr bool is_set() const { return set_; }
  constexpr int64_t value() const { return value_; }

 private:
  int64_t value_ = 0;
  bool set_ = false;
};

// start:stop:step, NumPy's: bounds clamp to the dim, a negative step walks backwards.
struct Slice {
  SliceBound start = none;
  SliceBound stop = none;
  int64_t step = 1;
};

// A whole dim (NumPy's `:`), and a new dim of size 1 (NumPy's np.newaxis).
struct All {};
inline constexpr All all{};
struct NewAxis {};
inline constexpr NewAxis newaxis{};

// One index of x(...) or x.at(...). Made implicitly at the call, so `loc` is the caller's line.
class Index {
 public:
  enum class Kind : uint8_t { Integer, Slice, All, NewAxis };
  template <std::integral T>
    requires(!std::is_same_v<T, bool>)
  Index(T i, std::source_location loc = std::source_location::current())  // NOLINT
      : kind_(Kind::Integer), integer_(static_cast<int64_t>(i)), loc_(loc) {}
  Index(ag::Slice s, std::source_location loc = std::source_location::current())  // NOLINT
      : kind_(Kind::Slice), slice_(s), loc_(loc) {}
  Index(All, std::source_location loc = std::source_location::current()) : kind_(Kind::All), loc_(loc) {}  // NOLINT
  Index(NewAxis, std::source_location loc = std::source_location::current())  // NOLINT
      : kind_(Kind::NewAxis), loc_(loc) {}

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const ag::Slice& slice() const { return slice_; }
  const std::source_location& loc() const { return loc_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  ag::Slice slice_;
  std::source_location loc_;
};

}  // namespace ag
