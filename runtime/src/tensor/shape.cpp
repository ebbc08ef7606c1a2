// Shape: inline dims with a fixed maximum rank.
#include "ag/shape.h"

#include <string>

#include "ag/error.h"

namespace ag {

void Shape::push_back(int64_t d) {
  if (rank_ >= kMaxRank)
    throw ValueError("agc supports tensors of rank up to " + std::to_string(kMaxRank));
  dims_[rank_++] = d;
}

void Shape::insert(size_t pos, int64_t d) {
  push_back(0);
  for (size_t i = rank_ - 1; i > pos; --i) dims_[i] = dims_[i - 1];
  dims_[pos] = d;
}

void Shape::erase(size_t pos) {
  for (size_t i = pos; i + 1 < rank_; ++i) dims_[i] = dims_[i + 1];
  --rank_;
}

void Shape::resize(size_t n, int64_t fill) {
  if (n > static_cast<size_t>(kMaxRank))
    throw ValueError("agc supports tensors of rank up to " + std::to_string(kMaxRank));
  for (size_t i = rank_; i < n; ++i) dims_[i] = fill;
  rank_ = static_cast<uint8_t>(n);
}

bool Shape::is_compatible_with(const Shape& s) const {
  if (s.rank() != rank()) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] >= 0 && s.dims_[i] >= 0 && dims_[i] != s.dims_[i]) return false;
  return true;
}

std::string Shape::str() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ',';
    s += dims_[i] < 0 ? std::string("?") : std::to_string(dims_[i]);
  }
  return s + "]";
}

std::string Shape::tf_str() const {
  std::string s = "(";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += dims_[i] < 0 ? std::string("None") : std::to_string(dims_[i]);
  }
  if (rank_ == 1) s += ",";
  return s + ")";
}

std::string SourceLoc::str() const {
  if (!known()) return {};
  std::string f = file;
  auto slash = f.find_last_of('/');
  if (slash != std::string::npos) f = f.substr(slash + 1);
  return f + ":" + std::to_string(line);
}

}  // namespace ag
