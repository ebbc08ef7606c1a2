// What linked object code calls of the runtime: read from the objects' symbol tables when the
// engine links them (engine.cpp), for code it compiled and code loaded from the disk cache alike.
#pragma once

#include <string_view>
#include <vector>

namespace ag::jit {

// Whether the objects call a runtime helper that takes the call's context (a Ctx parameter in
// rt_helpers.def): the only way compiled code reaches its CallState. Code that calls none can
// neither fail nor use slots, owned buffers or the outputs, and runs without a CallState
// (CallStub::try_run_direct). An object that cannot be read counts as calling one.
bool calls_context_helpers(const std::vector<std::string_view>& objects);

}  // namespace ag::jit
