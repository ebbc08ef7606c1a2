// The C side of the NumPy round trip (dlpack_numpy_test.py loads it with ctypes.PyDLL, so every
// call, and every DLPack deleter it runs, holds the GIL): agc tensors out to NumPy, NumPy arrays in.
#include <ag/ag.h>
#include <ag/dlpack.h>

#include <atomic>
#include <cstdlib>
#include <cstdio>
#include <cstring>

namespace {

std::atomic<int> g_released{0};
ag::Tensor g_held;  // a tensor viewing a NumPy array, kept until agc_py_drop

void free_buffer(void* p) {
  std::free(p);
  g_released.fetch_add(1);
}

ag::Tensor sum_twice(ag::Tensor x) { return ag::reduce_sum(ag::cast(x, ag::float64) * 2); }

}  // namespace

extern "C" {

// How many buffers agc_py_export made have been released.
int agc_py_released() { return g_released.load(); }

// A rows x cols float32 tensor over a malloc'ed buffer (element k = k / 2), exported: the
// consumer owns the only reference, and its deleter frees the buffer.
DLManagedTensor* agc_py_export(int rows, int cols) {
  auto* p = static_cast<float*>(std::malloc(sizeof(float) * static_cast<size_t>(rows * cols)));
  for (int k = 0; k < rows * cols; ++k) p[k] = static_cast<float>(k) / 2;
  return ag::to_dlpack(ag::from_external(p, ag::float32, {rows, cols}, free_buffer, p));
}

// sum(2 * x) of an imported array, computed by a compiled Function (the interpreter without
// the JIT). With `hold`, agc keeps the tensor (and so the array) until agc_py_drop. On an error
// its message goes to `error` and the DLManagedTensor stays the caller's.
double agc_py_consume(DLManagedTensor* m, int hold, char* error, int error_size) {
  try {
    ag::Tensor x = ag::from_dlpack(m);
    static auto* f = new auto(ag::function(sum_twice));  // never destroyed: no exit-order question
    const double s = (*f)(x).item<double>();
    if (hold) g_held = x;
    return s;
  } catch (const ag::Error& e) {
    std::snprintf(error, static_cast<size_t>(error_size), "%s: %s",
                  dynamic_cast<const ag::TypeError*>(&e) ? "TypeError" : "ValueError", e.what());
    return -1;
  }
}

void agc_py_drop() { g_held = ag::Tensor(); }

}  // extern "C"
