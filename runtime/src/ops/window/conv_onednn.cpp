#include "conv_onednn.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ag/detail/log.h"
#include "ag/detail/parallel.h"
#include "ag/detail/runtime_kernels.h"

namespace ag::detail {
namespace {

using dnnl::memory;
using tag = memory::format_tag;

std::atomic<uint64_t> g_calls{0}, g_bias_calls{0};

// The engine and the primitives are never destroyed: at exit, static destructors ran in an
// order where the primitive cache outlived oneDNN's own state and crashed in its destructor
// (1 in ~25 runs of the runtime tests); a process's last convolution may also run during
// static destruction.
dnnl::engine& cpu_engine() {
  static auto* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

// oneDNN runs on OpenMP threads: as many as agc's pool has (AG_NUM_THREADS,
// ag::set_num_threads), set on the calling thread, whose OpenMP settings oneDNN reads when it
// creates a primitive (its kernels split the work for that many threads then, once: a primitive
// made for 1 thread runs on 1 thread whatever the setting later). Returns the count.
int match_thread_count() {
  using SetThreads = void (*)(int);
  static const auto set_threads = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  thread_local int current = 0;
  const int want = parallel_threads();
  if (set_threads && want != current) {
    set_threads(want);
    current = want;
  }
  return want;
}

// A primitive per op, geometry and thread count (see match_thread_count).
struct Key {
  OpKind op;
  WindowGeometry g;
  int threads;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    const int64_t* p = &k.g.n;
    size_t h = static_cast<size_t>(k.op) * 31u + static_cast<size_t>(k.threads);
    for (size_t i = 0; i < sizeof(WindowGeometry) / sizeof(int64_t); ++i) h = h * 1000003u ^ static_cast<size_t>(p[i]);
    return h;
  }
};

// A primitive and the filter layout it wants: oneDNN's fast kernels read (or write) the
// filter in a blocked layout of their choosing, reordered from and to HWIO on each call (the
// filter is small; the reorder is a few percent of the convolution).
struct ConvPrimitive {
  dnnl::primitive primitive;
  memory::desc data_a, data_b, result;  // the op's NHWC operands, in the order of onednn_conv
  memory::desc bias;                     // FusedConv2D: [oc]
  memory::desc chosen_filter, user_filter;
  std::optional<dnnl::reorder> filter_reorder;  // HWIO <-> chosen; none when they are the same
};

memory::dims dims(int64_t a, int64_t b, int64_t c, int64_t d) { return {a, b, c, d}; }

// nullopt for a FusedConv2D whose kernel is not brgconv (see onednn_conv_bias).
std::optional<ConvPrimitive> make_primitive(OpKind op, const WindowGeometry& g, int threads) {
  dnnl::engine& eng = cpu_engine();
  const auto f32 = memory::data_type::f32;
  const memory::desc x(dims(g.n, g.ic, g.ih, g.iw), f32, tag::nhwc), y(dims(g.n, g.oc, g.oh, g.ow), f32, tag::nhwc);
  const memory::desc user_filter(dims(g.oc, g.ic, g.kh, g.kw), f32, tag::hwio);
  const memory::desc any_filter(dims(g.oc, g.ic, g.kh, g.kw), f32, tag::any);
  const memory::dims strides{g.sh, g.sw}, dilations{g.dh - 1, g.dw - 1}, pad_l{g.pt, g.pl}, pad_r{g.pb, g.pr};
  const auto direct = dnnl::algorithm::convolution_direct;
  const bool forward_only = op == OpKind::Conv2D || op == OpKind::FusedConv2D;
  const auto prop = forward_only ? dnnl::prop_kind::forward_inference : dnnl::prop_kind::forward_training;
  ConvPrimitive p;
  if (op == OpKind::FusedConv2D) p.bias = memory::desc({g.oc}, f32, tag::x);
  const dnnl::convolution_forward::primitive_desc forward(
      op == OpKind::FusedConv2D
          ? dnnl::convolution_forward::desc(prop, direct, x, any_filter, p.bias, y, strides, dilations, pad_l, pad_r)
          : dnnl::convolution_forward::desc(prop, direct, x, any_filter, y, strides, dilations, pad_l, pad_r),
      eng);
  p.user_filter = user_filter;
  std::string impl;
  if (forward_only) {
    impl = forward.impl_info_str();
    p.primitive = dnnl::convolution_forward(forward);
    p.chosen_filter = forward.weights_desc();
    p.data_a = x;
    p.result = y;
  } else if (op == OpKind::Conv2DBackpropInput) {
    const dnnl::convolution_backward_data::primitive_desc pd(
        dnnl::convolution_backward_data::desc(direct, x, any_filter, y, strides, dilations, pad_l, pad_r), eng, forward);
    impl = pd.impl_info_str();
    p.primitive = dnnl::convolution_backward_data(pd);
    p.chosen_filter = pd.weights_desc();
    p.data_a = y;
    p.result = x;
  } else {
    const dnnl::convolution_backward_weights::primitive_desc pd(
        dnnl::convolution_backward_weights::desc(direct, x, any_filter, y, strides, dilations, pad_l, pad_r), eng, forward);
    impl = pd.impl_info_str();
    p.primitive = dnnl::convolution_backward_weights(pd);
    p.chosen_filter = pd.diff_weights_desc();
    p.data_a = x;
    p.data_b = y;
  }
  if (p.chosen_filter != user_filter) {
    p.filter_reorder = op == OpKind::Conv2DBackpropFilter
                           ? dnnl::reorder(dnnl::reorder::primitive_desc(eng, p.chosen_filter, eng, user_filter))
                           : dnnl::reorder(dnnl::reorder::primitive_desc(eng, user_filter, eng, p.chosen_filter));
  }
  // brgconv adds the bias to each finished sum, as an Add after the convolution would; other
  // kernels may start their sums at it, which changes the bits.
  const bool exact_bias = op != OpKind::FusedConv2D || impl.rfind("brg", 0) == 0;
  if (log_enabled(LogTopic::Kernels))
    log_line(fmt::format("agc: {} {}x{}x{}x{} * {}x{}x{}x{}: oneDNN {}, {} thread{}{}", op_name(op), g.n, g.ih, g.iw, g.ic,
                         g.kh, g.kw, g.ic, g.oc, impl, threads, threads > 1 ? "s" : "",
                         exact_bias ? "" : " (not brgconv: a convolution without the bias instead, then agc adds it)"));
  if (!exact_bias) return std::nullopt;
  return p;
}

// nullptr when oneDNN has no implementation (remembered, so it is asked once).
const ConvPrimitive* primitive_for(OpKind op, const WindowGeometry& g) {
  static std::mutex mutex;
  static auto& cache = *new std::unordered_map<Key, std::optional<ConvPrimitive>, KeyHash>;  // never destroyed (cpu_engine)
  const int threads = match_thread_count();
  std::lock_guard lock(mutex);
  auto [it, inserted] = cache.try_emplace(Key{op, g, threads});
  if (inserted) {
    try {
      it->second = make_primitive(op, g, threads);
    } catch (const dnnl::error& e) {
      if (log_enabled(LogTopic::Kernels))
        log_line(fmt::format("agc: {}: oneDNN has no kernel ({}); agc's loops compute it", op_name(op), e.what()));
    }
  }
  return it->second ? &*it->second : nullptr;
}

bool run_conv(OpKind op, const WindowGeometry& g, const float* a, const float* b, const float* bias, float* out) {
  const ConvPrimitive* p = primitive_for(op, g);  // (sets this thread's OpenMP thread count)
  if (!p) return false;
  dnnl::engine& eng = cpu_engine();
  thread_local dnnl::stream stream(cpu_engine());
  thread_local std::vector<float> filter_scratch;
  auto mem = [&](const memory::desc& d, const void* ptr) { return memory(d, eng, const_cast<void*>(ptr)); };
  // The filter in oneDNN's layout: the operand (b of Conv2D and BackpropInput) or the result.
  const bool filter_out = op == OpKind::Conv2DBackpropFilter;
  const void* user = filter_out ? static_cast<const void*>(out) : b;
  memory filter = mem(p->user_filter, user);
  if (p->filter_reorder) {
    filter_scratch.resize(p->chosen_filter.get_size() / sizeof(float) + 1);
    memory chosen = mem(p->chosen_filter, filter_scratch.data());
    if (!filter_out) p->filter_reorder->execute(stream, filter, chosen);
    filter = chosen;
  }
  if (op == OpKind::Conv2D) {
    p->primitive.execute(stream, {{DNNL_ARG_SRC, mem(p->data_a, a)}, {DNNL_ARG_WEIGHTS, filter}, {DNNL_ARG_DST, mem(p->result, out)}});
  } else if (op == OpKind::FusedConv2D) {
    p->primitive.execute(stream, {{DNNL_ARG_SRC, mem(p->data_a, a)}, {DNNL_ARG_WEIGHTS, filter}, {DNNL_ARG_BIAS, mem(p->bias, bias)},
                                  {DNNL_ARG_DST, mem(p->result, out)}});
  } else if (op == OpKind::Conv2DBackpropInput) {
    p->primitive.execute(stream, {{DNNL_ARG_DIFF_DST, mem(p->data_a, a)}, {DNNL_ARG_WEIGHTS, filter},
                                  {DNNL_ARG_DIFF_SRC, mem(p->result, out)}});
  } else {
    p->primitive.execute(stream, {{DNNL_ARG_SRC, mem(p->data_a, a)}, {DNNL_ARG_DIFF_DST, mem(p->data_b, b)},
                                  {DNNL_ARG_DIFF_WEIGHTS, filter}});
    if (p->filter_reorder) {
      memory user_filter = mem(p->user_filter, out);
      p->filter_reorder->execute(stream, filter, user_filter);
    }
  }
  stream.wait();
  g_calls.fetch_add(1, std::memory_order_relaxed);
  if (bias) g_bias_calls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace

bool onednn_conv(OpKind op, const WindowGeometry& g, const float* a, const float* b, float* out) {
  return run_conv(op, g, a, b, nullptr, out);
}

bool onednn_conv_bias(const WindowGeometry& g, const float* x, const float* w, const float* bias, float* out) {
  return run_conv(OpKind::FusedConv2D, g, x, w, bias, out);
}

uint64_t onednn_conv_calls() { return g_calls.load(std::memory_order_relaxed); }
uint64_t onednn_conv_bias_calls() { return g_bias_calls.load(std::memory_order_relaxed); }

}  // namespace ag::detail
