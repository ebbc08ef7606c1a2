// libFuzzer target for the rewriter: arbitrary bytes are one C++ file, rewritten in memory the
// way ag-rewrite does it. What must hold for every input (scripts/fuzz.sh rewriter):
//  - no crash, no hang (libFuzzer's -timeout), no ASan report;
//  - when the input compiles and the rewrite succeeds, the rewritten text compiles too (a file
//    the rewriter writes is never one that breaks a build that worked);
//  - a failed rewrite produces no text (the tool then writes nothing).
// <ag/ag.h> is parsed once, into a precompiled header made at start-up, so an input costs its
// own parse and not the runtime's headers' (docs/performance.md, "Measured decisions": fuzzer PCH).
#include <clang/Basic/Diagnostic.h>
#include <clang/Frontend/FrontendActions.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ag/rewriter/rewriter.h"

namespace {

// The inputs are mapped in memory; the directory is real because Clang's tools chdir into it.
std::string g_dir;
std::vector<std::string> g_flags;  // the flags both parses use (the PCH's among them)

std::vector<std::string> baseFlags() {
  return {"-std=c++20", "-I" AG_FUZZ_RUNTIME_INCLUDE, "-resource-dir=" AG_CLANG_RESOURCE_DIR,
          "-Wno-unknown-warning-option", "-ferror-limit=5"};
}

// Builds the PCH of <ag/ag.h> with the compiler this target was built with's library, through
// a frontend action of the same libclang-cpp (a PCH from another Clang build would be refused).
std::string makePrecompiledHeader() {
  const std::string header = g_dir + "/prelude.h", pch = g_dir + "/prelude.h.pch";
  {
    std::FILE* f = std::fopen(header.c_str(), "w");
    if (!f) return "";
    std::fputs("#include <ag/ag.h>\n#include <tuple>\n#include <vector>\n", f);
    std::fclose(f);
  }
  std::vector<std::string> args = baseFlags();
  args.insert(args.begin(), "clang++");
  args.insert(args.end(), {"-x", "c++-header", header, "-o", pch, "-Xclang", "-emit-pch"});
  clang::IgnoringDiagConsumer quiet;
  clang::tooling::ToolInvocation invocation(args, std::make_unique<clang::GeneratePCHAction>(),
                                            new clang::FileManager(clang::FileSystemOptions()));
  invocation.setDiagnosticConsumer(&quiet);
  if (!invocation.run() || !llvm::sys::fs::exists(pch)) return "";
  return pch;
}

// Runs `action` on `code` as `path` with the fuzzing flags; true when the compile had no error.
bool runOn(clang::tooling::FrontendActionFactory& action, const std::string& path, const std::string& code,
           const std::vector<std::string>& extra = {}) {
  std::vector<std::string> flags = g_flags;
  flags.insert(flags.end(), extra.begin(), extra.end());
  clang::tooling::FixedCompilationDatabase database(g_dir, flags);
  clang::tooling::ClangTool tool(database, {path});
  tool.mapVirtualFile(path, code);
  clang::IgnoringDiagConsumer quiet;
  tool.setDiagnosticConsumer(&quiet);
  return tool.run(&action) == 0;
}

bool compiles(const std::string& path, const std::string& code, const std::vector<std::string>& extra = {}) {
  auto action = clang::tooling::newFrontendActionFactory<clang::SyntaxOnlyAction>();
  return runOn(*action, path, code, extra);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("ag-rewrite-fuzzer", dir)) {
    llvm::errs() << "ag-rewrite-fuzzer: cannot create a temporary directory\n";
    std::exit(2);
  }
  g_dir = dir.str().str();
  g_flags = baseFlags();
  if (const std::string pch = makePrecompiledHeader(); !pch.empty()) {
    g_flags.insert(g_flags.end(), {"-include-pch", pch});
  } else {
    llvm::errs() << "ag-rewrite-fuzzer: could not precompile <ag/ag.h>; every input parses it (slower)\n";
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string code(reinterpret_cast<const char*>(data), size);
  if (code.find('\0') != std::string::npos) return -1;  // not a source file; keep it out of the corpus

  ag::rewriter::Options options;
  std::vector<ag::rewriter::FileResult> results;
  auto factory = ag::rewriter::makeRewriteActionFactory(options, results);
  const std::string input_path = g_dir + "/input.cpp", output_path = g_dir + "/rewritten.cpp";
  const bool ran = runOn(*factory, input_path, code);
  if (!ran || results.size() != 1 || !results[0].ok) return 0;  // diagnosed: ag-rewrite writes nothing
  const ag::rewriter::FileResult& result = results[0];
  if (result.rewritten == code) return 0;  // nothing converted: the file is copied as is

  // The rewritten copy is compiled as ag_rewrite_sources() compiles it.
  if (compiles(output_path, result.rewritten, {"-DAG_REWRITTEN"})) return 0;
  if (!compiles(input_path, code)) return 0;  // an input with errors the rewrite did not need to see
  llvm::errs() << "ag-rewrite-fuzzer: the input compiles, the rewritten file does not:\n"
               << "----- rewritten -----\n"
               << result.rewritten << "\n----- end -----\n";
  std::abort();
}
