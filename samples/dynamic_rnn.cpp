// Accumulating values in a loop (the guide's dynamic_rnn): ag::TensorArray collects one state per
// time step of a staged loop.
#include <ag/ag.h>

using ag::Tensor;

Tensor rnn_step(Tensor inp, Tensor state) { return inp + state; }

AG_FUNCTION Tensor dynamic_rnn(Tensor input_data, Tensor initial_state) {
  // [batch, time, features] -> [time, batch, features]
  input_data = ag::transpose(input_data, {1, 0, 2});
  const int64_t max_seq_len = input_data.shape()[0];
  ag::TensorArray states(ag::float32, max_seq_len);
  Tensor state = initial_state;
  for (auto i : ag::range(Tensor(max_seq_len))) {
    state = rnn_step(input_data[i], state);
    states = states.write(i, state);
  }
  return ag::transpose(states.stack(), {1, 0, 2});
}

int main() {
  const int batch_size = 2, seq_len = 3, feature_size = 4;
  auto f = ag::function(dynamic_rnn);
  Tensor input = ag::ones({batch_size, seq_len, feature_size});
  Tensor out = f(input, ag::zeros({batch_size, feature_size}));
  fmt::print("{}\n", out);
  fmt::print("tracing_count: {}\n", f.tracing_count());
  return 0;
}
// OUT: tf.Tensor(
// OUT-NEXT: {{\[\[\[}}1. 1. 1. 1.]
// OUT-NEXT: [2. 2. 2. 2.]
// OUT-NEXT: [3. 3. 3. 3.]]
// OUT: shape=(2, 3, 4), dtype=float32)
// OUT-NEXT: tracing_count: 1
