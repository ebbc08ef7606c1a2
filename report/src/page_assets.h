// The report page's inline stylesheet and script (no external files: the page stands alone).
#pragma once

namespace ag::detail::report {

extern const char* const kPageStyle;   // the contents of <style>
extern const char* const kPageScript;  // the contents of <script>

}  // namespace ag::detail::report
