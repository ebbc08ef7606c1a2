// A loop transformation that metadata asks for and LLVM cannot do ("loop not unrolled": a short
// loop's llvm.loop.unroll.full that SimplifyCFG moved onto a staged While around it when it merged
// their latches) is reported under AG_LOG=compile, never printed to stderr by LLVM's default
// handler (optimizer.cpp, MissedTransformationsToLog). On IR written here, so that the test does
// not depend on which programs LLVM's passes happen to leave such metadata in.
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Target/TargetMachine.h>

#include <mutex>

#include "ag/detail/log.h"
#include "engine.h"
#include "jit_test_util.h"
#include "optimizer.h"
#include "target.h"

namespace {

// A loop of unknown trip count that asks to be unrolled whole: it cannot be.
constexpr const char* kLoopThatCannotUnroll = R"(
define void @fill(ptr %p, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %at = getelementptr inbounds float, ptr %p, i64 %i
  %v = load float, ptr %at, align 4
  %w = fmul float %v, %v
  store float %w, ptr %at, align 4
  %i.next = add nuw nsw i64 %i, 1
  %more = icmp slt i64 %i.next, %n
  br i1 %more, label %loop, label %exit, !llvm.loop !0
exit:
  ret void
}
!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.unroll.full"}
)";

TEST(MissedTransformations, GoToTheCompileLogNotStderr) {
  ag::jit::Engine::get();  // the native target, initialized once
  auto tm = ag::jit::jit_target_machine().createTargetMachine();
  ASSERT_TRUE(static_cast<bool>(tm));
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic parse_error;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(kLoopThatCannotUnroll, parse_error, ctx);
  ASSERT_TRUE(m) << parse_error.getMessage().str();
  m->setDataLayout((*tm)->createDataLayout());
  m->setTargetTriple((*tm)->getTargetTriple().str());

  std::mutex mu;
  std::vector<std::string> lines;
  ag::detail::set_log_topics(static_cast<unsigned>(ag::detail::LogTopic::Compile));
  ag::set_log_sink([&](std::string_view s) {
    const std::lock_guard lock(mu);
    lines.emplace_back(s);
  });
  testing::internal::CaptureStderr();
  ag::jit::optimize_module(*m, **tm, 2);
  const std::string err = testing::internal::GetCapturedStderr();
  ag::set_log_sink(nullptr);
  ag::detail::set_log_topics(0);
  EXPECT_EQ(err.find("loop not unrolled"), std::string::npos) << err;
  ASSERT_FALSE(lines.empty());  // one per loop the vectorizer leaves (the vector body, the remainder)
  for (const std::string& line : lines) {
    EXPECT_NE(line.find("agc: compile: LLVM: "), std::string::npos) << line;
    EXPECT_NE(line.find("loop not unrolled"), std::string::npos) << line;
  }
}

}  // namespace
