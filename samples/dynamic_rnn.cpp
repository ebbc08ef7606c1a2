// Accumulating values in a loop (the guide's dynamic_rnn): an ag::TensorArray collects one state
// per time step of a staged loop. The loop runs over ag::range of a tensor, so it is staged into
// one While node, and with an unknown time dimension in the input_signature one trace serves
// every sequence length.
#include <ag/ag.h>

using ag::Tensor;

Tensor rnn_step(Tensor inp, Tensor state) { return inp + state; }

AG_FUNCTION Tensor dynamic_rnn(Tensor input_data, Tensor initial_state) {
  // [batch, time, features] -> [time, batch, features]
  input_data = ag::transpose(input_data, {1, 0, 2});
  const Tensor max_seq_len = ag::shape_of(input_data)[0];
  ag::TensorArray states(ag::float32, 0);
  Tensor state = initial_state;
  for (Tensor i : ag::range(max_seq_len)) {
    state = rnn_step(input_data[i], state);
    states = states.write(i, state);
  }
  return ag::transpose(states.stack(), {1, 0, 2});
}

int main() {
  const int batch_size = 2, feature_size = 4;
  auto f = ag::function(dynamic_rnn, {.input_signature = {ag::TensorSpec({batch_size, -1, feature_size}, ag::float32),
                                                          ag::TensorSpec({batch_size, feature_size}, ag::float32)},
                                      .name = "dynamic_rnn"});
  for (int seq_len : {3, 5}) {
    Tensor out = f(ag::ones({batch_size, seq_len, feature_size}), ag::zeros({batch_size, feature_size}));
    fmt::print("seq_len={}: {}\n", seq_len, out);
  }
  fmt::print("tracing_count: {}\n", f.tracing_count());
  fmt::print("{}\n", f.get_concrete_function().graph_text());
  return 0;
}
// OUT: seq_len=3: tf.Tensor(
// OUT-NEXT: {{\[\[\[}}1. 1. 1. 1.]
// OUT-NEXT: [2. 2. 2. 2.]
// OUT-NEXT: [3. 3. 3. 3.]]
// OUT: shape=(2, 3, 4), dtype=float32)
// OUT: seq_len=5: tf.Tensor(
// OUT: [5. 5. 5. 5.]]
// OUT: shape=(2, 5, 4), dtype=float32)
// OUT-NEXT: tracing_count: 1
// OUT: While
// OUT: ListWrite
// OUT: ListStack
