// SavedModel for C++ (TensorFlow's tf.saved_model): concrete functions written to a directory
// with the Variables they use, and loaded by a program that never saw their source.
//
//   auto predict = model.get_concrete_function(ag::TensorSpec({-1, 784}, ag::float32));
//   ag::saved_model::save("model_dir", {{"predict", predict}, {"train_step", step}});
//   ...
//   ag::saved_model::Module m = ag::saved_model::load("model_dir");
//   std::vector<ag::Tensor> y = m.call("predict", {x});   // compiled by the JIT, or interpreted
//
// The directory holds a versioned manifest (saved_model.txt) with a checksum per file, one
// graph per signature in agc's graph text (graphs/<name>.graph, what ConcreteFunction::graph_text
// shows, constants in full), and the Variables' values at save time (variables.graph). A loaded
// Module owns fresh Variables holding those values: a saved training step keeps training them.
// Another version's files, a truncated or altered file, or a missing signature are ValueErrors
// naming the file; loading never trusts a byte it has not checked (docs/saved_model.md).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ag/function.h"
#include "ag/tensor.h"
#include "ag/tensor_spec.h"
#include "ag/variable.h"

namespace ag::saved_model {

// The manifest's format version; load refuses any other.
inline constexpr int kFormatVersion = 1;

// One concrete function to save, under a name: made from any ConcreteFunction (its optimized
// graph, which reads Variables by reference; plain arguments are frozen into it, as traced).
class SavedFunction {
 public:
  template <class Sig>
  SavedFunction(const ConcreteFunction<Sig>& f)  // NOLINT(google-explicit-constructor): {{"name", f}}
      : graph_(std::make_shared<Graph>(f.graph())), signature_(f.signature()) {}
  const std::shared_ptr<const Graph>& graph() const { return graph_; }
  const std::string& signature() const { return signature_; }

 private:
  std::shared_ptr<const Graph> graph_;
  std::string signature_;
};

struct SaveOptions {
  // Also write each signature's machine code for these CPU levels ("x86-64-v2", "x86-64-v3",
  // "x86-64-v4", widest first): a program that loads the model with the JIT links the code of
  // the widest level its CPU has instead of compiling (docs/saved_model.md, "Compiled code").
  // Needs the JIT in the saving program (else an ag::Error).
  std::vector<std::string> compiled_for;
};

// Writes the functions and the Variables they read to `dir` (created if missing; files of an
// earlier save there are replaced). Names are [A-Za-z0-9_]+ and unique. Two different Variables
// with the same name and type cannot be told apart in the files: a ValueError asks to rename one.
void save(const std::string& dir, const std::vector<std::pair<std::string, SavedFunction>>& functions,
          const SaveOptions& options = {});

// A signature of a loaded Module: its inputs (the saved function's tensor parameters, in order)
// and outputs.
struct Signature {
  std::string name;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::string text;  // the saved function's signature as ConcreteFunction::signature() printed it
};

struct LoadOptions {
  // Run on the JIT when it is linked in (else, or false: the graph interpreter). With the JIT, a
  // signature saved with compiled code this CPU can run links that code instead of compiling.
  bool jit_compile = true;
};

class Module {
 public:
  // Runs `signature` on `inputs` (one tensor per input, dtypes equal and shapes compatible:
  // else a TypeError / ValueError naming the input). Compiles on the first call of each
  // signature. Thread-safe, as a Function is.
  std::vector<Tensor> call(const std::string& signature, const std::vector<Tensor>& inputs) const;
  std::vector<Signature> signatures() const;
  // The Variables the signatures read and write, by name (unnamed ones as "variable #<k>"), in
  // the order they were saved.
  std::vector<std::pair<std::string, Variable>> variables() const;
  // The graph a signature runs (inspection: graph_to_text, graph_to_dot).
  const Graph& graph(const std::string& signature) const;

  struct Impl;
  explicit Module(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<Impl> impl_;
};

Module load(const std::string& dir, LoadOptions options = {});

}  // namespace ag::saved_model
