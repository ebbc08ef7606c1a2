// Shape: the dims of a tensor, stored inline (no heap). -1 is an unknown dim in specs and graphs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace ag {

class Shape {
 public:
  static constexpr int kMaxRank = 8;
  static constexpr int64_t kUnknown = -1;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { assign(dims.begin(), dims.end()); }
  Shape(const std::vector<int64_t>& dims) { assign(dims.begin(), dims.end()); }  // NOLINT: vector-like
  explicit Shape(std::span<const int64_t> dims) { assign(dims.begin(), dims.end()); }
  template <class It>
  Shape(It first, It last) { assign(first, last); }

  int64_t rank() const { return rank_; }
  size_t size() const { return rank_; }
  bool empty() const { return rank_ == 0; }
  int64_t operator[](size_t i) const { return dims_[i]; }
  int64_t& operator[](size_t i) { return dims_[i]; }
  int64_t back() const { return dims_[rank_ - 1]; }
  const int64_t* begin() const { return dims_; }
  const int64_t* end() const { return dims_ + rank_; }
  int64_t* begin() { return dims_; }
  int64_t* end() { return dims_ + rank_; }
  const int64_t* data() const { return dims_; }

  void push_back(int64_t d);
  void insert(size_t pos, int64_t d);
  void erase(size_t pos);
  void resize(size_t n, int64_t fill = 0);
  void clear() { rank_ = 0; }

  // Product of the dims; -1 when a dim is unknown. A rank-0 shape has 1 element.
  int64_t num_elements() const {
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i) {
      if (dims_[i] < 0) return -1;
      n *= dims_[i];
    }
    return n;
  }
  bool is_fully_defined() const { return std::all_of(begin(), end(), [](int64_t d) { return d >= 0; }); }
  // True when a concrete shape `s` fits this (possibly partially unknown) shape.
  bool is_compatible_with(const Shape& s) const;
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  // "[2,3]" / "[?,3]" (graph text), "(2, 3)" / "(None, 3)" (TensorFlow style).
  std::string str() const;
  std::string tf_str() const;

  friend bool operator==(const Shape& a, const Shape& b) {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i)  // a plain loop: std::equal becomes a memcmp call
      if (a.dims_[i] != b.dims_[i]) return false;
    return true;
  }

 private:
  template <class It>
  void assign(It first, It last) {
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  int64_t dims_[kMaxRank] = {};
  uint8_t rank_ = 0;
};

}  // namespace ag
