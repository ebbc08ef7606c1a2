// ag::GradientTape's public API, and its Jacobians: one backward pass per element of the target
// (of a row, for batch_jacobian), each seeded with a one-hot gradient. Eagerly they run in a
// plain loop; while tracing, in a staged while loop over the elements whose body is one backward
// pass (TensorFlow's while_loop fallback of jacobian), so the graph holds one backward whatever
// the target's size, and unknown dims work.
#include <fmt/format.h>

#include "ag/construct.h"
#include "ag/detail/variable_state.h"
#include "ag/operators/staging.h"
#include "ag/tensor_array.h"
#include "tape_state.h"

namespace ag::detail {
namespace {

// The row-major index of each element of `t` counted over dims [from, rank): an int64 tensor
// that broadcasts against `t` (shape [dims from..] ), with dims read at run time when unknown.
Tensor flat_index(const Tensor& t, int64_t from) {
  const int64_t rank = t.rank();
  Tensor index(int64_t{0}), stride(int64_t{1});
  const Tensor dims = shape_of(t);
  for (int64_t d = rank - 1; d >= from; --d) {
    const Tensor dim = t.shape()[d] >= 0 ? Tensor(t.shape()[d]) : gather(dims, Tensor(d));
    Tensor along = range(dim);
    for (int64_t k = d + 1; k < rank; ++k) along = expand_dims(along, -1);
    index = index + along * stride;
    stride = stride * dim;
  }
  return index;
}

// The number of elements of `t` over dims [from, rank), an int64 scalar (a constant when known).
Tensor elements(const Tensor& t, int64_t from) {
  Tensor n(int64_t{1});
  const Tensor dims = shape_of(t);
  for (int64_t d = from; d < t.rank(); ++d) n = n * (t.shape()[d] >= 0 ? Tensor(t.shape()[d]) : gather(dims, Tensor(d)));
  return n;
}

// The seed of backward pass `i`: 1 where the element's index over dims [from, rank) is i.
Tensor one_hot_seed(const Tensor& target, const Tensor& index_of_elements, const Tensor& i) {
  return zeros_like(target) + cast(equal(index_of_elements, i), target.dtype());
}

// `x` reshaped to `shape`, which may have one unknown dim.
Tensor reshape_known(const Tensor& x, const Shape& shape, SourceLoc loc) {
  if (std::count_if(shape.begin(), shape.end(), [](int64_t d) { return d < 0; }) > 1)
    throw UnimplementedError(fmt::format("GradientTape::jacobian: a result of shape {} (more than one unknown dim) is "
                                         "not supported yet{}",
                                         shape.str(), at(loc)));
  return reshape(x, shape);
}

}  // namespace

std::vector<Tensor> TapeState::jacobians(const Tensor& target, const std::vector<Source>& sources,
                                         UnconnectedGradients unconnected, bool batch, SourceLoc loc) {
  const char* what = batch ? "batch_jacobian" : "jacobian";
  if (!target.has_value()) throw ValueError(fmt::format("GradientTape::{}: the target has no value{}", what, at(loc)));
  const int64_t from = batch ? 1 : 0;
  if (batch) {
    if (target.rank() < 1 || sources[0].shape.rank() < 1)
      throw ValueError(fmt::format("GradientTape::batch_jacobian: the target ({}) and the source ({}) need a batch dim "
                                   "(rank >= 1){}",
                                   target.shape().str(), sources[0].shape.str(), at(loc)));
    const int64_t tb = target.shape()[0], sb = sources[0].shape[0];
    if (tb >= 0 && sb >= 0 && tb != sb)
      throw ValueError(fmt::format("GradientTape::batch_jacobian: the target's batch dim {} differs from the "
                                   "source's {}{}",
                                   tb, sb, at(loc)));
  }
  const GradientCall call(*this, what);
  const Tensor index = flat_index(target, from);
  // The sources the target reaches (the others: none, or zeros when asked): one pass, zero seed.
  const Tensor zero_seed = zeros_like(target);
  const std::vector<Tensor> probe = backward({&target, 1}, {&zero_seed, 1}, sources, UnconnectedGradients::none, loc);
  const size_t n_sources = sources.size();
  std::vector<bool> wanted(n_sources);
  for (size_t s = 0; s < n_sources; ++s)
    wanted[s] = probe[s].has_value() || (unconnected == UnconnectedGradients::zero && is_floating(sources[s].dtype));
  auto pass = [&](const Tensor& i) {
    const Tensor seed = one_hot_seed(target, index, i);
    return backward({&target, 1}, {&seed, 1}, sources, UnconnectedGradients::zero, loc);
  };
  std::vector<Tensor> rows(n_sources);  // per source: [elements, source...]
  if (!target.is_symbolic() && std::none_of(sources.begin(), sources.end(), [](const Source& s) { return s.tensor.is_symbolic(); })) {
    // Eagerly: a plain loop.
    const int64_t n = elements(target, from).item<int64_t>();
    std::vector<std::vector<Tensor>> per_source(n_sources);
    for (int64_t i = 0; i < n; ++i) {
      const std::vector<Tensor> g = pass(Tensor(i));
      for (size_t s = 0; s < n_sources; ++s) per_source[s].push_back(g[s]);
    }
    for (size_t s = 0; s < n_sources; ++s) {
      if (!wanted[s]) continue;
      Shape empty{0};
      for (int64_t d : sources[s].shape) empty.push_back(d);
      rows[s] = n == 0 ? zeros(empty, sources[s].dtype) : stack(per_source[s]);
    }
  } else {
    // While tracing: a staged loop over the elements, writing each pass's gradients.
    std::vector<Tensor> state{Tensor(int64_t{0})};
    for (size_t s = 0; s < n_sources; ++s) state.push_back(TensorArray(sources[s].dtype).handle());
    const Tensor n = elements(target, from);
    auto cond = [&]() -> Tensor { return state[0] < n; };
    auto body = [&] {
      const std::vector<Tensor> g = pass(state[0]);
      for (size_t s = 0; s < n_sources; ++s)
        if (wanted[s]) state[1 + s] = TensorArray::from_handle(state[1 + s], sources[s].dtype).write(state[0], g[s]).handle();
      state[0] = state[0] + int64_t{1};
    };
    std::vector<StateVar> vars;
    append_state_vars(vars, state, what);
    staged_while(cond, body, vars, loc, batch ? "batch_jacobian loop" : "jacobian loop");
    for (size_t s = 0; s < n_sources; ++s)
      if (wanted[s]) rows[s] = TensorArray::from_handle(state[1 + s], sources[s].dtype).stack();
  }
  std::vector<Tensor> out(n_sources);
  for (size_t s = 0; s < n_sources; ++s) {
    Tensor r = rows[s];
    if (!r.has_value()) continue;
    if (batch) {  // [m, b, x...] -> [b, m, x...] -> [b, y..., x...]
      std::vector<int64_t> perm{1, 0};
      for (int64_t d = 2; d < r.rank(); ++d) perm.push_back(d);
      r = transpose(r, perm);
      if (target.rank() != 2) {
        Shape shape{r.shape()[0]};
        for (int64_t d = 1; d < target.rank(); ++d) shape.push_back(target.shape()[d]);
        for (int64_t d = 2; d < r.rank(); ++d) shape.push_back(r.shape()[d]);
        r = reshape_known(r, shape, loc);
      }
      out[s] = r;
    } else if (target.rank() == 0) {
      out[s] = squeeze(r, std::vector<int64_t>{0});
    } else if (target.rank() != 1) {
      Shape shape = target.shape();
      for (int64_t d = 1; d < r.rank(); ++d) shape.push_back(r.shape()[d]);
      out[s] = reshape_known(r, shape, loc);
    } else {
      out[s] = r;
    }
  }
  return out;
}

}  // namespace ag::detail

namespace ag {

GradientTape::GradientTape(bool persistent, bool watch_accessed_variables)
    : state_(std::make_unique<detail::TapeState>(persistent, watch_accessed_variables, detail::current_frame())) {}
GradientTape::~GradientTape() = default;

void GradientTape::watch(const Tensor& t) { state_->watch(t); }
void GradientTape::watch(const Variable& v) { state_->watch_variable(v.state()); }

Tensor GradientTape::gradient(const Tensor& target, const GradSource& source, UnconnectedGradients unconnected,
                              Loc loc) {
  return state_->gradient({&target, 1}, {}, {detail::source_of(source)}, unconnected, loc)[0];
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<GradSource>& sources,
                                           UnconnectedGradients unconnected, Loc loc) {
  return state_->gradient({&target, 1}, {}, detail::sources_of(sources), unconnected, loc);
}

std::vector<Tensor> GradientTape::gradient(const Tensor& target, const std::vector<GradSource>& sources,
                                           const Tensor& output_gradients, UnconnectedGradients unconnected, Loc loc) {
  return state_->gradient({&target, 1}, {&output_gradients, 1}, detail::sources_of(sources), unconnected, loc);
}

Tensor GradientTape::jacobian(const Tensor& target, const GradSource& source, UnconnectedGradients unconnected, Loc loc) {
  return state_->jacobians(target, {detail::source_of(source)}, unconnected, /*batch=*/false, loc)[0];
}

std::vector<Tensor> GradientTape::jacobian(const Tensor& target, const std::vector<GradSource>& sources,
                                           UnconnectedGradients unconnected, Loc loc) {
  return state_->jacobians(target, detail::sources_of(sources), unconnected, /*batch=*/false, loc);
}

Tensor GradientTape::batch_jacobian(const Tensor& target, const Tensor& source, UnconnectedGradients unconnected,
                                    Loc loc) {
  return state_->jacobians(target, {detail::source_of(source)}, unconnected, /*batch=*/true, loc)[0];
}

GradientTape::RecordingPaused::RecordingPaused(detail::TapeState* tape, bool was) : tape_(tape), was_(was) {}
GradientTape::RecordingPaused::RecordingPaused(RecordingPaused&& other) noexcept
    : tape_(std::exchange(other.tape_, nullptr)), was_(other.was_) {}
GradientTape::RecordingPaused::~RecordingPaused() {
  if (tape_) tape_->recording = was_;
}

GradientTape::RecordingPaused GradientTape::stop_recording() {
  const bool was = state_->recording;
  state_->recording = false;
  return RecordingPaused(state_.get(), was);
}

void GradientTape::reset() { state_->reset(); }

std::vector<Variable> GradientTape::watched_variables() const {
  std::vector<Variable> out;
  for (const auto& v : state_->watched_variables) out.push_back(Variable::from_state(v));
  return out;
}

}  // namespace ag
