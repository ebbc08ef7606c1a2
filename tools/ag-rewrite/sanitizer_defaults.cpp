// Sanitizer defaults for ag-rewrite in ASan builds (./test.sh --asan); nothing otherwise.
// Clang's Sema leaks the SmallVector growth of template-deduction failure details it keeps in
// ASTContext-allocated objects (their destructors never run). libLLVM has no frame pointers, so
// the fast unwinder stops inside it and a suppression by function cannot match: ag-rewrite (only
// it — the tests keep the fast unwinder) records full stacks of its allocations instead.
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
extern "C" const char* __lsan_default_suppressions() { return "leak:clang::MakeDeductionFailureInfo\n"; }
#endif
