// Compiling one module on two threads: a module's matmul kernels (noinline functions, compiled
// for size) and a large entry's loop nests move into a second module that a pool thread
// optimizes and compiles while the calling thread does the rest; the two objects link into one
// JITDylib (docs/jit.md, "Two threads per compile"). LLVM: included by engine code only.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace ag::jit {

// A module's kernels that would move to the second module, or none when they are too small to
// pay for a module of their own (kMinSecondPartInstructions). An entry function of
// kOutlineNestsAbove instructions or more first has its top-level loop nests (of
// kMinNestInstructions or more) moved into functions of their own, which count as kernels; a
// staged loop of more than kMaxNestInstructions, or than half the entry, with loops inside (a
// while whose body holds an ODE solver's dozens of stages, or an LSTM's six nests) gives its
// inner nests instead, by the same rule: as one function it is one thread's work, and LLVM's
// time on it grows faster than its size. A loop over elements moves whole (its inner loop alone
// would be a call per row).
// When the calling thread's side still costs more than the other by three functions' worth,
// the rest of the entry from some block on moves too, as one function (`agc_entry.tail`), of
// about half the difference (an MLP's train step: forty nests each too small to move alone).
// Sides are weighed as instructions plus kFunctionCost per function, the calling thread's side
// times kCallingSideWeight percent.
// Deterministic: the same module always splits the same way, whatever the thread count.
std::vector<std::string> second_part_functions(llvm::Module& m);
constexpr size_t kMinSecondPartInstructions = 64;
// Entries of 150 to 500 instructions compiled on one thread took 13-25 ms in a new process (an
// LSTM encoder, a heat stencil, logistic regression, conjugate gradients); split, their slower
// side 10-15 ms.
constexpr size_t kOutlineNestsAbove = 150;
constexpr size_t kMinNestInstructions = 32;
constexpr size_t kMaxNestInstructions = 400;
// LLVM's passes cost each function about as much as this many instructions (codegen's ~150
// machine passes, each with its analyses): 20 functions of 10 instructions take llc 5x one.
constexpr size_t kFunctionCost = 60;
// The calling thread's side (the entry, its loops not moved, the module's own setup) took
// 1.2-1.5x the time per unit of weight (instructions + kFunctionCost) of the second side in
// five of six split apps of bench/apps (MLP 1.39, transformer 1.54, Game of Life 1.32,
// Runge-Kutta 1.19, n-body 1.30; k-means 0.93).
constexpr size_t kCallingSideWeight = 130;

// Moves `names` out of `m`: they become external (other functions of `m` call them by name)
// and, in `m`, declarations. Returns the second module as bitcode, for another LLVMContext.
std::string split_off(llvm::Module& m, const std::vector<std::string>& names);

// The second module, in `ctx`: the bitcode split_off returned, with only `names` defined.
std::unique_ptr<llvm::Module> second_part(llvm::LLVMContext& ctx, std::string_view bitcode,
                                          const std::vector<std::string>& names);

// Several object files in one disk-cache entry. One object stays as it is, so entries of
// unsplit modules are plain object files.
std::string bundle_objects(const std::vector<std::string>& objects);
// The objects of an entry; empty if a bundle is malformed.
std::vector<std::string_view> unbundle_objects(std::string_view entry);

}  // namespace ag::jit
