// ag::distribute in the runtime: staging the collective ops, their kernel (eager, interpreter and
// compiled code run it), and the single-process engine a program has until agc::distribute's
// init() installs MPI's.
#include <fmt/format.h>

#include <atomic>
#include <cstring>

#include "../ops/kernels.h"
#include "../trace/frame.h"
#include "ag/detail/communicator.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/tape.h"
#include "ag/variable.h"

namespace ag::distribute {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::mean: return "mean";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
  }
  return "?";
}

}  // namespace ag::distribute

namespace ag::detail {
namespace {

// One process: every collective is a copy (the other processes' contributions are none).
class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_reduce(const CollectiveCall& call, const void* in, void* out, int64_t count) override {
    if (in != out) std::memcpy(out, in, static_cast<size_t>(count) * dtype_size(call.dtype));
  }
  void broadcast(const CollectiveCall&, void*, int64_t) override {}
  void all_gather(const CollectiveCall&, const void* in, void* out, int64_t bytes) override {
    if (in != out) std::memcpy(out, in, static_cast<size_t>(bytes));
  }
  void barrier(const CollectiveCall&) override {}
};

SingleProcess g_single;
std::unique_ptr<Communicator> g_installed;
std::atomic<Communicator*> g_current{&g_single};

const char* kind_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::Broadcast: return "broadcast";
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::Barrier: return "barrier";
  }
  return "?";
}

CollectiveKind kind_of(OpKind op) {
  switch (op) {
    case OpKind::AllReduce: return CollectiveKind::AllReduce;
    case OpKind::CollectiveBroadcast: return CollectiveKind::Broadcast;
    case OpKind::AllGather: return CollectiveKind::AllGather;
    default: throw InternalError(fmt::format("ag::distribute: {} is not a collective", op_name(op)));
  }
}

uint64_t mix(uint64_t h, uint64_t v) {  // FNV-1a over 64-bit words
  h ^= v;
  return h * 1099511628211ull;
}

template <class T>
void divide(void* data, int64_t count, int n) {
  T* p = static_cast<T*>(data);
  for (int64_t i = 0; i < count; ++i) p[i] /= static_cast<T>(n);
}

}  // namespace

std::string CollectiveCall::describe() const {
  std::string what = kind_name(kind);
  if (kind == CollectiveKind::AllReduce) what += fmt::format("({})", distribute::reduce_op_name(op));
  if (kind == CollectiveKind::Broadcast) what += fmt::format("(root {})", root);
  if (kind != CollectiveKind::Barrier) what += fmt::format(" of {}{}", dtype_name(dtype), shape.str());
  return what + at(loc);
}

uint64_t CollectiveCall::fingerprint() const {
  uint64_t h = 14695981039346656037ull;
  h = mix(h, static_cast<uint64_t>(kind));
  if (kind == CollectiveKind::Barrier) return h;
  h = mix(h, static_cast<uint64_t>(op));
  h = mix(h, static_cast<uint64_t>(dtype));
  h = mix(h, static_cast<uint64_t>(root));
  h = mix(h, static_cast<uint64_t>(shape.rank()));
  for (int64_t i = 0; i < shape.rank(); ++i) h = mix(h, static_cast<uint64_t>(shape[i]));
  return h;
}

Communicator& communicator() { return *g_current.load(std::memory_order_acquire); }

void install_communicator(std::unique_ptr<Communicator> c) {
  g_current.store(c ? c.get() : &g_single, std::memory_order_release);
  g_installed = std::move(c);  // the previous engine goes after nothing can reach it
}

void run_collective(OpKind op, const Attrs& attrs, SourceLoc loc, DType dtype, const Shape& in_shape, const void* in,
                    void* out) {
  Communicator& comm = communicator();
  CollectiveCall call;
  call.kind = kind_of(op);
  call.dtype = dtype;
  call.shape = in_shape;
  call.loc = loc;
  const int64_t count = in_shape.num_elements();
  const int64_t bytes = count * static_cast<int64_t>(dtype_size(dtype));
  switch (call.kind) {
    case CollectiveKind::AllReduce: {
      call.op = static_cast<distribute::ReduceOp>(attrs.axis);
      if (call.op == distribute::ReduceOp::mean) call.op = distribute::ReduceOp::sum;  // then divided here
      comm.all_reduce(call, in, out, count);
      if (static_cast<distribute::ReduceOp>(attrs.axis) == distribute::ReduceOp::mean && comm.size() > 1) {
        if (dtype == DType::Float32) divide<float>(out, count, comm.size());
        else divide<double>(out, count, comm.size());
      }
      return;
    }
    case CollectiveKind::Broadcast:
      call.root = static_cast<int>(attrs.axis);
      if (call.root >= comm.size())
        throw InvalidArgumentError(fmt::format("ag::distribute::broadcast: root {} is not a rank of {} processes{}",
                                               call.root, comm.size(), at(loc)));
      if (in != out) std::memcpy(out, in, static_cast<size_t>(bytes));
      comm.broadcast(call, out, bytes);
      return;
    case CollectiveKind::AllGather:
      if (attrs.axis != comm.size())
        throw InvalidArgumentError(fmt::format("ag::distribute::all_gather: staged for {} processes, running on {}{}",
                                               attrs.axis, comm.size(), at(loc)));
      comm.all_gather(call, in, out, bytes);
      return;
    case CollectiveKind::Barrier: break;
  }
  throw InternalError("run_collective: not a data collective");
}

// The eager kernel (stateful.cpp dispatches here).
Tensor collective_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& type,
                         SourceLoc loc) {
  Tensor out = make_tensor(type.dtype, type.shape);
  const TensorImpl* x = impl_of(in[0]);
  run_collective(op, attrs, loc, x->dtype, x->shape, x->data, impl_of(out)->data);
  return out;
}

Tensor stage_collective(OpKind op, const Tensor& t, int64_t slot, SourceLoc loc) {
  Attrs a;
  a.axis = slot;
  if (!is_tracing()) return apply_op(op, {t}, a, loc);
  // Staged even from a concrete operand (apply_op would run it now, once, at trace time): a
  // collective runs on every call. Recorded on the tapes as apply_op records an op.
  const Tensor in[1] = {t};
  Tensor out = trace_op(op, in, a, loc);
  if (tapes_alive()) tape_record(op, in, a, loc, {&out, 1});
  return out;
}

}  // namespace ag::detail

namespace ag::distribute {

using detail::communicator;

int rank() { return communicator().rank(); }
int world_size() { return communicator().size(); }

void barrier(std::source_location loc) {
  detail::CollectiveCall call;
  call.kind = detail::CollectiveKind::Barrier;
  call.loc = loc;
  communicator().barrier(call);
}

Tensor all_reduce(const Tensor& t, ReduceOp op, std::source_location loc) {
  return detail::stage_collective(OpKind::AllReduce, t, static_cast<int64_t>(op), loc);
}

Tensor broadcast(const Tensor& t, int root, std::source_location loc) {
  if (root < 0 || root >= world_size())
    throw ValueError(fmt::format("ag::distribute::broadcast: root {} is not a rank of {} processes{}", root,
                                 world_size(), detail::at(loc)));
  return detail::stage_collective(OpKind::CollectiveBroadcast, t, root, loc);
}

Tensor all_gather(const Tensor& t, std::source_location loc) {
  return detail::stage_collective(OpKind::AllGather, t, world_size(), loc);
}

std::vector<Tensor> all_reduce_gradients(std::span<const Tensor> grads, ReduceOp op, std::source_location loc) {
  // One collective per gradient, in order and back to back: inside a Function the fusion pass
  // (fuse_all_reduces) packs them into one buffer per dtype.
  std::vector<Tensor> out;
  out.reserve(grads.size());
  for (const Tensor& g : grads) out.push_back(g.has_value() ? all_reduce(g, op, loc) : g);
  return out;
}

std::vector<std::pair<Tensor, Variable*>> all_reduce_gradients(std::vector<std::pair<Tensor, Variable*>> grads_and_vars,
                                                               ReduceOp op, std::source_location loc) {
  for (auto& [g, v] : grads_and_vars)
    if (g.has_value()) g = all_reduce(g, op, loc);
  return grads_and_vars;
}

void broadcast_variables(std::span<Variable* const> variables, int root, std::source_location loc) {
  for (Variable* v : variables) v->assign(broadcast(v->value(), root, loc));
}

}  // namespace ag::distribute
