// Code compiled ahead of time (agc::jit_core; docs/deploying.md). ag-aot compiles a saved model's
// signatures into object files, one per CPU level, and writes a source file that embeds the saved
// model and names those objects' entry points in an EmbeddedModel; ag_add_aot_library builds both
// into a static library with a typed header. A program linking it runs the signatures without
// LLVM: the first call costs what a cached call does. This header is what that generated source
// uses; an application includes the generated header instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ag/saved_model.h"

namespace ag::aot {

// A compiled entry point (ag::jit::EntryFn, behind a type the generated code can name).
using EntryPoint = int32_t (*)(const void* args, void* ctx);

// One signature's code for one CPU level ("x86-64-v3").
struct CompiledCode {
  const char* cpu;
  EntryPoint entry;
};

// A signature and its code, widest CPU level first.
struct CompiledSignature {
  const char* name;
  const CompiledCode* code;
  size_t num_code;
};

// A file of the saved model, as ag-aot embedded it.
struct EmbeddedFile {
  const char* path;
  const unsigned char* bytes;
  size_t size;
};

struct EmbeddedModel {
  const char* name;  // the library's name, in errors
  const EmbeddedFile* files;
  size_t num_files;
  const CompiledSignature* signatures;
  size_t num_signatures;
};

// The embedded saved model, checked as saved_model::load checks a directory, with fresh Variables
// holding the saved values. Each signature runs the code of the widest CPU level this CPU has; a
// signature with none that fits runs on the graph interpreter (and says so once, in the log).
// Every signature is made ready here (its graph planned), so a first call costs a later one's.
saved_model::Module load(const EmbeddedModel& model);

// The CPU level whose code `signature` runs in this process, or "" when none fits this CPU.
std::string selected_cpu(const CompiledSignature& signature);

}  // namespace ag::aot
