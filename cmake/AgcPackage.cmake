# Install rules and the agc CMake package (filled in with the rewriter integration).
