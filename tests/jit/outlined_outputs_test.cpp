// Which loops move into functions of their own (module_split.cpp), and how a moved nest hands
// back its outputs. A loop nest moved into a function of its own (outline) hands the values the
// entry reads after it (an index kept for the error message of a failed check, a reduction's
// accumulators) back through pointer arguments. CodeExtractor stores each right after its
// definition, so inside the loop; agc stores it once, before the returns. On IR written here:
// an entry large enough to have its loop outlined, with a check inside whose exit reads the
// index.
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "module_split.h"

namespace {

// agc_entry(ctx, rows, x, n): for each i, row = rows[i] (checked < n: the failure exit reads
// it), then a chain of `chain` multiply-adds on x[row] stored back; the sum of the rows read
// (an accumulator the entry stores after the loop).
// `chain` multiply-adds on %v0, and the name of the last value: a loop body large enough to be
// outlined.
std::pair<std::string, std::string> multiply_adds(int chain) {
  std::string body;
  std::string v = "%v0";
  for (int k = 0; k < chain; ++k) {
    const std::string m = "%m" + std::to_string(k), a = "%v" + std::to_string(k + 1);
    body += "  " + m + " = fmul float " + v + ", 2.0\n";
    body += "  " + a + " = fadd float " + m + ", 0.5\n";
    v = a;
  }
  return {body, v};
}

std::string entry_with_checked_loop(int chain) {
  const auto [body, v] = multiply_adds(chain);
  return R"(
declare void @agc_rt_fail(ptr, i64)

define i32 @agc_entry(ptr %ctx, ptr noalias %rows, ptr noalias %x, ptr noalias %sum, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %ok ]
  %acc = phi i64 [ 0, %entry ], [ %acc.next, %ok ]
  %at = getelementptr inbounds i64, ptr %rows, i64 %i
  %row = load i64, ptr %at, align 8
  %bad = icmp uge i64 %row, %n
  br i1 %bad, label %fail, label %ok
ok:
  %px = getelementptr inbounds float, ptr %x, i64 %row
  %v0 = load float, ptr %px, align 4
)" + body + "  store float " + v + R"(, ptr %px, align 4
  %acc.next = add i64 %acc, %row
  %i.next = add nuw nsw i64 %i, 1
  %more = icmp slt i64 %i.next, %n
  br i1 %more, label %loop, label %done
done:
  store i64 %acc.next, ptr %sum, align 8
  ret i32 0
fail:
  call void @agc_rt_fail(ptr %ctx, i64 %row)
  ret i32 1
}
)";
}

TEST(OutlinedNests, StoreTheirOutputsOnceNotInTheLoop) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(entry_with_checked_loop(80), error, ctx);
  ASSERT_TRUE(m) << error.getMessage().str();
  (void)ag::jit::second_part_functions(*m);
  std::string broken;
  llvm::raw_string_ostream why(broken);
  ASSERT_FALSE(llvm::verifyModule(*m, &why)) << broken;

  const llvm::Function* nest = nullptr;
  for (const llvm::Function& f : *m)
    if (f.getName().starts_with("agc_entry.nest")) nest = &f;
  ASSERT_NE(nest, nullptr) << "the loop was not outlined";
  llvm::Function& fn = const_cast<llvm::Function&>(*nest);
  const llvm::DominatorTree dt(fn);
  const llvm::LoopInfo loops(dt);
  int output_stores = 0;
  for (llvm::BasicBlock& bb : fn)
    for (llvm::Instruction& inst : bb) {
      auto* st = llvm::dyn_cast<llvm::StoreInst>(&inst);
      if (!st || !llvm::isa<llvm::Argument>(st->getPointerOperand())) continue;
      ++output_stores;
      EXPECT_EQ(loops.getLoopFor(&bb), nullptr) << "an output stored inside the loop, in block " << bb.getName().str();
    }
  // The failing row (read by the failure exit) and the accumulator (stored by the entry after
  // the loop), each stored at the returns its definition dominates.
  EXPECT_GE(output_stores, 2);
}

// A loop over rows around a loop over a row's elements, the outer loop's header named `outer`
// (a loop over elements) or `while.cond` (a staged loop, as lower_control.cpp names it).
std::string entry_with_two_level_loop(const std::string& outer, int chain) {
  const auto [body, v] = multiply_adds(chain);
  return R"(
define i32 @agc_entry(ptr noalias %x, i64 %rows, i64 %cols) {
entry:
  br label %)" + outer + R"(
)" + outer + R"(:
  %r = phi i64 [ 0, %entry ], [ %r.next, %row.end ]
  %base = mul i64 %r, %cols
  br label %col
col:
  %c = phi i64 [ 0, %)" + outer + R"( ], [ %c.next, %col ]
  %at = add i64 %base, %c
  %px = getelementptr inbounds float, ptr %x, i64 %at
  %v0 = load float, ptr %px, align 4
)" + body + "  store float " + v + R"(, ptr %px, align 4
  %c.next = add nuw nsw i64 %c, 1
  %more.c = icmp slt i64 %c.next, %cols
  br i1 %more.c, label %col, label %row.end
row.end:
  %r.next = add nuw nsw i64 %r, 1
  %more.r = icmp slt i64 %r.next, %rows
  br i1 %more.r, label %)" + outer + R"(, label %done
done:
  ret i32 0
}
)";
}

// The loops left in the entry after the split.
size_t loops_left_in_entry(const std::string& outer) {
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic error;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(entry_with_two_level_loop(outer, 120), error, ctx);
  EXPECT_TRUE(m) << error.getMessage().str();
  if (!m) return 0;
  (void)ag::jit::second_part_functions(*m);
  EXPECT_FALSE(llvm::verifyModule(*m, &llvm::errs()));
  llvm::Function* entry = m->getFunction("agc_entry");
  const llvm::DominatorTree dt(*entry);
  const llvm::LoopInfo loops(dt);
  size_t n = 0;
  for (const llvm::Loop* l : loops) n += 1 + l->getLoopsInPreorder().size() - 1;
  return n;
}

// A loop over elements larger than a nest may be moves whole: moving its inner loop alone made
// a call of every row. A staged loop gives its inner loops and stays in the entry.
TEST(OutlinedNests, ALoopOverElementsMovesWholeAStagedLoopGivesItsInnerLoops) {
  EXPECT_EQ(loops_left_in_entry("outer"), 0u);
  EXPECT_EQ(loops_left_in_entry("while.cond"), 1u);
}

}  // namespace
