// ag-rewrite: converts the tensor control flow of AG_FUNCTION functions into calls of agc's
// runtime operators.   ag-rewrite [options] <files> -- <compiler flags>   (or -p <build dir>)
#include <clang/Driver/Driver.h>
#include <clang/Tooling/ArgumentsAdjusters.h>
#include <clang/Tooling/CommonOptionsParser.h>
#include <clang/Tooling/CompilationDatabase.h>
#include <clang/Tooling/Tooling.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/InitLLVM.h>
#include <llvm/Support/raw_ostream.h>

#include <optional>
#include <string_view>

#include "ag/rewriter/rewriter.h"
#include "output.h"

namespace {

namespace cl = llvm::cl;

cl::OptionCategory category("ag-rewrite options");
cl::opt<std::string> output_path("o", cl::desc("Write the rewritten file here (atomically) instead of stdout"),
                                 cl::value_desc("file"), cl::cat(category));
cl::opt<bool> diff("diff", cl::desc("Print only what changed, as a unified diff"), cl::cat(category));
cl::opt<bool> no_line_directives("no-line-directives",
                                 cl::desc("Omit the #line directives that map the output back to the original lines"),
                                 cl::cat(category));
cl::opt<bool> no_register("no-register", cl::desc("Do not register converted functions' names with the runtime"),
                          cl::cat(category));
cl::opt<std::string> depfile_path("depfile", cl::desc("Write a Makefile-style depfile of the files the rewrite read"),
                                  cl::value_desc("file"), cl::cat(category));

constexpr int kExitConversionError = 1;
constexpr int kExitUsageError = 2;

// The directory of Clang's builtin headers (stddef.h, ...): the one this tool was built
// against, else the one beside the executable (an installed LLVM tree).
std::string resourceDir(const char* argv0) {
  if (llvm::sys::fs::is_directory(AG_CLANG_RESOURCE_DIR)) return AG_CLANG_RESOURCE_DIR;
  static int anchor;
  const std::string exe = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  return clang::driver::Driver::GetResourcesPath(exe);
}

bool hasCompilationFlags(int argc, const char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--" || a == "-p" || a.starts_with("-p=") || a == "--p" || a.starts_with("--p=")) return true;
  }
  return false;
}

// The build directory of `-p <dir>` (`-p=<dir>`), unless flags follow `--` (which win, as in
// every Clang tool).
std::optional<std::string> buildDirectory(int argc, const char** argv) {
  std::optional<std::string> dir;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") return std::nullopt;
    if ((a == "-p" || a == "--p") && i + 1 < argc) dir = argv[++i];
    else if (a.starts_with("-p=")) dir = std::string(a.substr(3));
    else if (a.starts_with("--p=")) dir = std::string(a.substr(4));
  }
  return dir;
}

// Flags only GCC knows, which a Clang tool would reject.
clang::tooling::ArgumentsAdjuster stripGccOnlyFlags() {
  return [](const clang::tooling::CommandLineArguments& args, llvm::StringRef) {
    clang::tooling::CommandLineArguments out;
    for (const std::string& a : args)
      if (!llvm::StringRef(a).starts_with("-fconcepts-diagnostics-depth") && a != "-fno-semantic-interposition" &&
          !llvm::StringRef(a).starts_with("-fmax-include-depth"))
        out.push_back(a);
    return out;
  };
}

}  // namespace

int main(int argc, const char** argv) {
  llvm::InitLLVM init(argc, argv);
  if (!hasCompilationFlags(argc, argv)) {
    llvm::errs() << "ag-rewrite: error: no compiler flags: pass them after '--' (ag-rewrite file.cpp -- -std=c++20 "
                    "-I...) or give a build directory with compile_commands.json (-p build)\n";
    return kExitUsageError;
  }
  // Without a database Clang's option parser would go on "without flags" and report compile
  // errors for the user's includes: a wrong -p is a usage error.
  if (std::optional<std::string> dir = buildDirectory(argc, argv)) {
    std::string error;
    if (!clang::tooling::CompilationDatabase::autoDetectFromDirectory(*dir, error)) {
      llvm::errs() << "ag-rewrite: error: -p " << *dir << ": no compilation database (compile_commands.json) in '"
                   << *dir << "' or a directory above it\n";
      return kExitUsageError;
    }
  }
  auto parser = clang::tooling::CommonOptionsParser::create(argc, argv, category, cl::OneOrMore,
                                                            "Converts tensor control flow in AG_FUNCTION functions.\n");
  if (!parser) {
    llvm::errs() << "ag-rewrite: error: " << llvm::toString(parser.takeError()) << "\n";
    return kExitUsageError;
  }
  const std::vector<std::string>& files = parser->getSourcePathList();
  if (!output_path.empty() && files.size() != 1) {
    llvm::errs() << "ag-rewrite: error: -o needs exactly one input file\n";
    return kExitUsageError;
  }
  for (const std::string& file : files) {
    if (!llvm::sys::fs::exists(file)) {
      llvm::errs() << "ag-rewrite: error: no such file: '" << file << "'\n";
      return kExitUsageError;
    }
    // Clang would take it for a source file and fail with "expected exactly one compiler job".
    if (llvm::sys::fs::is_directory(file)) {
      llvm::errs() << "ag-rewrite: error: '" << file << "' is a directory, not a source file: name the files to "
                   << "rewrite (ag-rewrite file.cpp ... -- <flags>; in CMake, ag_rewrite_sources(<target> <files>))\n";
      return kExitUsageError;
    }
  }
  if (diff && !output_path.empty()) {  // like clang-format: --dry-run / -i, one output at a time
    llvm::errs() << "ag-rewrite: error: --diff prints to stdout and cannot be combined with -o\n";
    return kExitUsageError;
  }
  if (!depfile_path.empty() && output_path.empty()) {
    llvm::errs() << "ag-rewrite: error: --depfile needs -o\n";
    return kExitUsageError;
  }

  clang::tooling::ClangTool tool(parser->getCompilations(), files);
  tool.appendArgumentsAdjuster(stripGccOnlyFlags());
  tool.appendArgumentsAdjuster(clang::tooling::getInsertArgumentAdjuster(
      {"-resource-dir=" + resourceDir(argv[0]), "-Wno-unknown-warning-option"},
      clang::tooling::ArgumentInsertPosition::END));

  ag::rewriter::Options options;
  options.line_directives = !no_line_directives;
  options.register_functions = !no_register;
  std::vector<ag::rewriter::FileResult> results;
  const int status = tool.run(ag::rewriter::makeRewriteActionFactory(options, results).get());

  bool ok = status == 0 && results.size() == files.size();
  for (const auto& r : results) ok = ok && r.ok;
  if (!ok) return kExitConversionError;  // diagnostics were printed; nothing is written

  for (const auto& r : results) {
    if (diff) {
      llvm::outs() << ag::tool::unifiedDiff(r);
    } else if (!output_path.empty()) {
      const std::string text = no_register ? r.rewritten : ag::tool::withSourceRegistration(r, output_path);
      if (std::string error = ag::tool::writeAtomically(output_path, text); !error.empty()) {
        llvm::errs() << "ag-rewrite: error: " << error << "\n";
        return kExitConversionError;
      }
    } else {
      llvm::outs() << r.rewritten;
    }
    if (!depfile_path.empty())
      if (std::string error = ag::tool::writeAtomically(depfile_path, ag::tool::depfile(output_path, r)); !error.empty()) {
        llvm::errs() << "ag-rewrite: error: " << error << "\n";
        return kExitConversionError;
      }
  }
  return 0;
}
