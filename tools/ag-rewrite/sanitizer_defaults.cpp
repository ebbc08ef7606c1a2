// Sanitizer defaults for ag-rewrite in ASan builds (./test.sh --asan); nothing otherwise.
// Clang's Sema leaks what it keeps in ASTContext-allocated objects, whose destructors never run:
// the SmallVector growth of template-deduction failure details, and the string arguments of the
// access diagnostics it defers in dependent contexts (DependentDiagnostic, met when a deduction
// guide such as std::pair's is instantiated for a lambda argument: samples/custom_gradients).
// libLLVM has no frame pointers, so the fast unwinder stops inside it and a suppression by
// function cannot match: ag-rewrite (only it — the tests keep the fast unwinder) records full
// stacks of its allocations instead.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AG_REWRITE_ASAN 1
#endif
#endif
#if !defined(AG_REWRITE_ASAN) && defined(__SANITIZE_ADDRESS__)
#define AG_REWRITE_ASAN 1
#endif

#ifdef AG_REWRITE_ASAN
extern "C" const char* __lsan_default_options() { return "fast_unwind_on_malloc=0:print_suppressions=0"; }
extern "C" const char* __lsan_default_suppressions() {
  return "leak:clang::MakeDeductionFailureInfo\nleak:clang::DependentDiagnostic::Create\n";
}
#endif
