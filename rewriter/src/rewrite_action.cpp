// The frontend action: after Clang has parsed a translation unit, converts the AG_FUNCTION
// functions of its main file and assembles the rewritten file.
#include <clang/AST/ASTConsumer.h>
#include <clang/AST/ExprCXX.h>
#include <clang/AST/RecursiveASTVisitor.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/FrontendAction.h>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>

#include <map>
#include <regex>

#include "ag/rewriter/rewriter.h"
#include "ast_queries.h"
#include "code_writer.h"
#include "context.h"
#include "function_converter.h"
#include "function_registration.h"
#include "header_functions.h"
#include "unmarked_callees.h"

namespace ag::rewriter {
namespace {

// The functions with a body in the main file: marked ones to convert, the others to check.
class FunctionFinder : public clang::RecursiveASTVisitor<FunctionFinder> {
 public:
  explicit FunctionFinder(const clang::SourceManager& sm) : sm_(sm) {}
  // Declarations from headers are skipped whole: only the main file is rewritten, and walking
  // the standard library or Eigen would cost more than the conversion.
  bool TraverseDecl(clang::Decl* d) {
    if (d && !llvm::isa<clang::TranslationUnitDecl>(d) && !sm_.isInMainFile(sm_.getExpansionLoc(d->getLocation())))
      return true;
    return RecursiveASTVisitor::TraverseDecl(d);
  }
  bool VisitFunctionDecl(clang::FunctionDecl* fn) {
    if (!fn->doesThisDeclarationHaveABody() || fn->isImplicit() || !fn->getBody()) return true;
    if (!sm_.isInMainFile(sm_.getFileLoc(fn->getLocation()))) return true;
    if (const auto* method = llvm::dyn_cast<clang::CXXMethodDecl>(fn); method && method->getParent()->isLambda())
      return true;  // converted with the function that defines the lambda
    if (isDoNotConvert(fn)) return true;  // as written, and no warning for calling it
    (isMarkedFunction(fn) ? marked : unmarked).push_back(fn);
    return true;
  }
  std::vector<const clang::FunctionDecl*> marked, unmarked;

 private:
  const clang::SourceManager& sm_;
};

// Identifiers that generated names must avoid: every ag__ name spelled in the function.
std::set<std::string> generatedLookingNames(const std::string& text) {
  std::set<std::string> out;
  static const std::regex pattern("ag__[A-Za-z0-9_]*");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern); it != std::sregex_iterator(); ++it)
    out.insert(it->str());
  return out;
}

std::string baseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

class RewriteConsumer : public clang::ASTConsumer {
 public:
  RewriteConsumer(const Options& options, std::vector<FileResult>& results) : options_(options), results_(results) {}

  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    clang::SourceManager& sm = ctx.getSourceManager();
    clang::DiagnosticsEngine& engine = ctx.getDiagnostics();
    FileResult result;
    const clang::OptionalFileEntryRef main = sm.getFileEntryRefForID(sm.getMainFileID());
    // Absolute, so that #line directives lead debuggers to the file wherever the output is built.
    if (main) {
      llvm::SmallString<256> absolute(main->getName());
      llvm::sys::fs::make_absolute(absolute);
      llvm::sys::path::remove_dots(absolute, /*remove_dot_dot=*/true);
      result.path = absolute.str().str();
    }
    result.original = sm.getBufferData(sm.getMainFileID()).str();
    for (auto it = sm.fileinfo_begin(); it != sm.fileinfo_end(); ++it) result.dependencies.push_back(it->first.getName().str());
    engine.setIgnoreAllWarnings(false);  // the user's own warnings were muted while parsing
    if (engine.hasErrorOccurred()) {
      results_.push_back(std::move(result));
      return;
    }
    SourceText src(ctx);
    Diagnostics diags(engine);
    FunctionFinder finder(sm);
    finder.TraverseDecl(ctx.getTranslationUnitDecl());

    for (const clang::FunctionDecl* fn : finder.marked) convert(fn, src, diags, result);
    warnUnmarkedCallees(finder.marked, finder.unmarked, diags);
    warnMarkedFunctionsInHeaders(ctx, diags);

    result.ok = !diags.hasErrors() && !engine.hasErrorOccurred();
    result.rewritten = assemble(result);
    results_.push_back(std::move(result));
  }

 private:
  void convert(const clang::FunctionDecl* fn, SourceText& src, Diagnostics& diags, FileResult& result) {
    const auto* body = llvm::dyn_cast<clang::CompoundStmt>(fn->getBody());
    if (!body) return;
    if (!SourceText::editable(body->getLBracLoc()) || !SourceText::editable(body->getRBracLoc())) {
      if (hasTensorControlFlow(body)) diags.report(Diag::InsideMacro, fn->getLocation(), {"this function"});
      return;
    }
    auto range = src.fileRange(body->getSourceRange());
    if (!range) return;
    Namer namer(generatedLookingNames(src.text(*range)));
    std::map<const clang::LambdaExpr*, std::optional<std::string>> lambdas;
    Context cx{src, diags, options_, baseName(result.path), namer, nullptr};
    cx.convert_lambda = [&](const clang::LambdaExpr* lambda) -> std::optional<std::string> {
      auto it = lambdas.find(lambda);
      if (it != lambdas.end()) return it->second;
      std::optional<std::string> text;
      if (hasTensorControlFlow(lambda->getBody()))
        text = convertFunctionBody(cx, lambda->getCallOperator(), llvm::cast<clang::CompoundStmt>(lambda->getBody()));
      return lambdas[lambda] = text;
    };
    std::optional<std::string> converted = convertFunctionBody(cx, fn, body);
    // Every AG_FUNCTION registers its name and parameter names, converted or not (a function
    // of straight-line code is traced as written but should still say `f(x: ...)`): after the
    // closing brace, on its line.
    std::optional<std::string> registration =
        options_.register_functions ? registrationFor(fn, src) : std::nullopt;
    if (!converted && !registration) return;
    const unsigned end = src.offset(range->getEnd());
    Edit edit = converted ? Edit{src.offset(range->getBegin()), end, *converted} : Edit{end, end, ""};
    if (registration) edit.replacement += *registration;
    result.edits.push_back(std::move(edit));
  }

  std::string assemble(FileResult& result) const {
    if (result.edits.empty()) return result.original;
    std::sort(result.edits.begin(), result.edits.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    std::string out = options_.line_directives ? lineDirective(1, result.path) + "\n" : std::string();
    unsigned pos = 0;
    for (const Edit& e : result.edits) {
      out += result.original.substr(pos, e.begin - pos) + e.replacement;
      pos = e.end;
    }
    return out + result.original.substr(pos);
  }

  const Options& options_;
  std::vector<FileResult>& results_;
};

class RewriteAction : public clang::ASTFrontendAction {
 public:
  RewriteAction(const Options& options, std::vector<FileResult>& results) : options_(options), results_(results) {}

 protected:
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance&, llvm::StringRef) override {
    return std::make_unique<RewriteConsumer>(options_, results_);
  }
  bool BeginSourceFileAction(clang::CompilerInstance& ci) override {
    // The user's code is compiled for real later: its warnings belong to that compile.
    ci.getDiagnostics().setIgnoreAllWarnings(true);
    return true;
  }

 private:
  const Options& options_;
  std::vector<FileResult>& results_;
};

class RewriteActionFactory : public clang::tooling::FrontendActionFactory {
 public:
  RewriteActionFactory(const Options& options, std::vector<FileResult>& results) : options_(options), results_(results) {}
  std::unique_ptr<clang::FrontendAction> create() override { return std::make_unique<RewriteAction>(options_, results_); }

 private:
  Options options_;
  std::vector<FileResult>& results_;
};

}  // namespace

std::unique_ptr<clang::tooling::FrontendActionFactory> makeRewriteActionFactory(const Options& options,
                                                                                 std::vector<FileResult>& results) {
  return std::make_unique<RewriteActionFactory>(options, results);
}

}  // namespace ag::rewriter
