# Writes the files a Markdown page spells out into the directory `dir`: a line
# `<!-- file: NAME -->` names the file, and the next fenced code block (```...```) is its text.
#   awk -v dir=<dir> -f extract_doc_files.awk page.md
/^<!-- file: .* -->$/ { name = $3; want = 1; next }
want && /^```/ && !inside { inside = 1; out = dir "/" name; printf "" > out; next }
inside && /^```$/ { inside = 0; want = 0; close(out); print name; next }
inside { print >> out }
