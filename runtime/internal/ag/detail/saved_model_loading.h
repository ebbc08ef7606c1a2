// Loading a saved model from bytes already in memory, with the executables made by the caller:
// ag::saved_model::load reads a directory into this; a library of code compiled ahead of time
// (ag/aot.h) passes the files embedded in it and executables that run its linked code.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "ag/backend.h"
#include "ag/saved_model.h"

namespace ag::saved_model::detail {

// Makes the executable of every signature while loading (code linked ahead of time: the first
// call then costs what a later one does). Null: each signature's first call makes it, on the JIT
// when linked (and options.jit_compile), else on the interpreter, as load() does.
using ExecutableFactory =
    std::function<std::unique_ptr<Executable>(const std::string& signature, const std::shared_ptr<const Graph>& graph)>;

// `files`: the manifest (under "saved_model.txt") and every file it lists, by relative path.
// Checks all of them as load() does; `where` names the model in errors (a directory, or an
// embedded model's name).
Module load_files(const std::map<std::string, std::string_view>& files, const std::string& where, LoadOptions options,
                  ExecutableFactory factory = nullptr);

}  // namespace ag::saved_model::detail
