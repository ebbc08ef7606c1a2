// agc: AutoGraph for C++. The umbrella header.
#pragma once

#include "ag/backend.h"
#include "ag/callback.h"
#include "ag/construct.h"
#include "ag/custom_gradient.h"
#include "ag/debugging.h"
#include "ag/distribute.h"
#include "ag/dtype.h"
#include "ag/error.h"
#include "ag/function.h"
#include "ag/function_options.h"
#include "ag/gradients.h"
#include "ag/indexing.h"
#include "ag/optimizers.h"
#include "ag/memory.h"
#include "ag/nn.h"
#include "ag/graph/graph.h"
#include "ag/graph/parser.h"
#include "ag/graph/printer.h"
#include "ag/operators/control_flow.h"
#include "ag/operators/functional.h"
#include "ag/operators/logical.h"
#include "ag/operators/state.h"
#include "ag/ops.h"
#include "ag/platform.h"
#include "ag/print.h"
#include "ag/random.h"
#include "ag/saved_model.h"
#include "ag/shape.h"
#include "ag/tensor.h"
#include "ag/tensor_array.h"
#include "ag/tensor_spec.h"
#include "ag/tree.h"
#include "ag/variable.h"

// Marks a function (free, member, or template) for ag-rewrite: its tensor control flow is
// converted into calls of the operators above. Outside Clang (and after rewriting) it expands
// to nothing, so g++ sees plain C++.
// AG_DO_NOT_CONVERT (TensorFlow's tf.autograph.experimental.do_not_convert) keeps a function's
// control flow as written even where it is marked AG_FUNCTION on another declaration, and
// silences ag-rewrite's warning for a converted function calling it: its tensor conditions must
// then have values when it runs (eagerly, or on concrete tensors while tracing).
#if defined(__clang__) && !defined(AG_REWRITTEN)
#define AG_FUNCTION [[clang::annotate("ag_function")]]
#define AG_DO_NOT_CONVERT [[clang::annotate("ag_do_not_convert")]]
#else
#define AG_FUNCTION
#define AG_DO_NOT_CONVERT
#endif
