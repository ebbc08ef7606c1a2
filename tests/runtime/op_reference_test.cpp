// docs/ops.md is the op table as ag-opt --emit=op-table prints it: a new op or a changed column
// makes this fail until the page is generated again. And every op has what the page needs.
#include <gtest/gtest.h>

#include <ag/ag.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

TEST(OpReference, TheCommittedPageIsTheTable) {
  std::ifstream in(AG_OPS_PAGE);
  ASSERT_TRUE(in) << AG_OPS_PAGE;
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(page == ag::op_reference_markdown())
      << "docs/ops.md is out of date: build/tools/ag-opt --emit=op-table > docs/ops.md";
}

TEST(OpReference, EveryOpHasAnEquivalentAndDtypes) {
  const std::string page = ag::op_reference_markdown();
  for (int i = 0; i < ag::kNumOps; ++i) {
    const ag::OpInfo& info = ag::op_info(static_cast<ag::OpKind>(i));
    EXPECT_FALSE(info.equivalent.empty()) << info.name;
    const size_t row = page.find("| `" + std::string(info.name) + "` |");
    ASSERT_NE(row, std::string::npos) << info.name;
    // The row's cells: op, C++, dtypes, gradient, compiled as, raises, equivalent.
    std::vector<std::string> cells;
    const std::string line = page.substr(row + 2, page.find('\n', row) - row - 2);
    for (size_t at = 0, next; (next = line.find(" | ", at)) != std::string::npos; at = next + 3)
      cells.push_back(line.substr(at, next - at));
    ASSERT_GE(cells.size(), 5u) << line;
    EXPECT_FALSE(cells[2].empty()) << "no words for the type rule " << info.type_rule << ": " << line;
    EXPECT_FALSE(cells[4].empty()) << "how is it compiled? " << line;
  }
}
