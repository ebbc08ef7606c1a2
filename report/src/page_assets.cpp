// The report's CSS and its script: clicking a graph node or a node row highlights the source
// line, the IR lines and the assembly lines that node became (like Compiler Explorer).
#include "page_assets.h"

namespace ag::detail::report {

const char* const kPageStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 0 1.5em 2em; color: #1d1d1f; background: #fff; }
h1 { font-size: 1.5em; margin: 0.6em 0 0.2em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; margin-top: 1.6em; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.4em; }
nav { position: sticky; top: 0; background: #f5f5f7; padding: 0.4em 0.6em; border-bottom: 1px solid #ddd; z-index: 2; }
nav a { margin-right: 1em; }
[id] { scroll-margin-top: 2.5em; }  /* an anchor jumped to is not hidden under the nav */
table { border-collapse: collapse; font-size: 0.9em; } td, th { border: 1px solid #ddd; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f0f0f3; }
code, pre, .mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
pre.code { background: #fafafa; border: 1px solid #e3e3e3; padding: 4px 0; overflow: auto; max-height: 36em; margin: 0; }
pre.code .line { display: block; padding: 0 6px; white-space: pre; }
pre.code .ln { color: #999; user-select: none; text-decoration: none; }
pre.code .mapped .ln { color: #3b6fb6; }
.hl { background: #fff2a8 !important; }
.graph { overflow: auto; border: 1px solid #e3e3e3; resize: vertical; }
.graph svg { display: block; max-width: 100%; height: auto; }  /* a wide graph shrinks to the page */
.graph.actual-size svg { max-width: none; }
g.ag-node.hl polygon, g.ag-node.hl ellipse { fill: #fff2a8; }
.note { color: #6b6b70; font-style: italic; }
.diff .add { background: #e6ffec; } .diff .del { background: #ffebe9; }
.side { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; } .side > div { min-width: 0; }
details > summary { cursor: pointer; margin: 0.3em 0; }
.sig { font-family: ui-monospace, monospace; }
)css";

const char* const kPageScript = R"js(
function agHighlight(sig, node) {
  document.querySelectorAll('.hl').forEach(e => e.classList.remove('hl'));
  const key = sig + '-' + node;
  document.querySelectorAll('[data-key="' + key + '"], #' + CSS.escape(key) + ', #' + CSS.escape(sig + '-row-' + node))
    .forEach(e => e.classList.add('hl'));
  const row = document.getElementById(sig + '-row-' + node);
  if (row && row.dataset.src) {
    const line = document.getElementById(row.dataset.src);
    if (line) line.classList.add('hl');
  }
  document.querySelectorAll('#' + CSS.escape(sig) + ' .mapped[data-node="' + node + '"]').forEach(e => e.classList.add('hl'));
}
window.addEventListener('hashchange', () => {
  const m = location.hash.match(/^#(s\d+)-(?:row-)?(n[0-9s_n]+)$/);
  if (m) agHighlight(m[1], m[2]);
});
)js";

}  // namespace ag::detail::report
