"""Random AG_FUNCTION programs and their plain C++ references, from one statement tree.

A program is a tree of statements over a fixed set of variables. It is printed twice:
  - "tensor": an AG_FUNCTION on ag::Tensor, for ag-rewrite;
  - "ref":    a plain C++ function on agfuzz::I32 / float / IVec / IList (fuzz_harness.h), which
              also records branch and loop-count coverage.
Loops always terminate: each is bounded by a counter or a range whose bound reads only
parameters, which no statement assigns. Division is only by non-zero constants. Integer
arithmetic wraps, identically in both worlds (docs/eager.md), so any value is a valid answer.

Every statement node has an id; `Program.render(removed, unwrapped)` prints the program without
the removed nodes and with unwrapped compound nodes replaced by their bodies (delta debugging).
"""

import random

INT_PARAMS = ["a", "b"]
BOUNDS = ["(a % 3 + 2)", "(b % 4 + 1)", "k", "3", "(a % 2 + 1)"]
INT_CONSTS = [0, 1, 2, 3, -1, 5, 7, -4]
FLOAT_CONSTS = ["0.5f", "1.5f", "-2.0f", "0.25f", "3.0f"]
DIVISORS = [2, 3, -2, 5]
CMP_OPS = ["<", "<=", ">", ">=", "==", "!="]


class Expr:
    """An expression: a function of the printing mode ("tensor" or "ref") to text."""

    def __init__(self, render, tensor=True):
        self._render = render
        self.tensor = tensor  # an ag::Tensor (I32/float in the reference), not a plain literal or int

    def __call__(self, mode):
        return self._render(mode)


def lit(text, tensor=True):
    return Expr(lambda mode: text, tensor)


def tensor_or_ref(tensor_text, ref_text):
    return Expr(lambda mode: tensor_text if mode == "tensor" else ref_text)


def int_value(e):
    """An int expression as a value of the tensor/reference type (so ?: and max see one type)."""
    if e.tensor:
        return e
    return Expr(lambda mode: ("ag::Tensor(" if mode == "tensor" else "agfuzz::I32(") + e(mode) + ")")


class Scope:
    """What a statement may read and write where it is generated."""

    def __init__(self, ints, floats, readonly_ints, in_loop, depth, in_plain_loop=False, innermost_plain=False,
                 staged_since_loop=False, under_staged=False):
        self.ints = ints  # assignable int32 scalars
        self.floats = floats  # assignable float32 scalars
        self.readonly_ints = readonly_ints  # loop variables and counters
        self.in_loop = in_loop
        self.depth = depth
        # A tensor-dependent break (innermost loop plain) or return (any enclosing loop plain)
        # cannot stop a C++ loop that runs while tracing: ag::function reports it (a documented
        # limitation, tested in tests/runtime), so those jumps get plain conditions here.
        # So inside a plain loop, break and continue get plain conditions with nothing staged
        # between the loop and them, and return nothing staged around it at all.
        self.in_plain_loop = in_plain_loop
        self.innermost_plain = innermost_plain
        self.staged_since_loop = staged_since_loop  # a staged if between the innermost loop and here
        self.under_staged = under_staged  # any staged if or loop around here
        self.in_switch = False  # inside a case of a switch, loops in it included

    def inner(self, **changes):
        s = Scope(list(self.ints), list(self.floats), list(self.readonly_ints), self.in_loop, self.depth + 1,
                  self.in_plain_loop, self.innermost_plain, self.staged_since_loop, self.under_staged)
        s.in_switch = self.in_switch
        for k, v in changes.items():
            setattr(s, k, v)
        return s


class Node:
    """A statement. `kind` names it in reductions; `blocks` are its nested statement lists."""

    def __init__(self, ident, kind, render, blocks=(), site=None):
        self.id = ident
        self.kind = kind
        self.render = render  # (mode, body_renderer) -> list of lines
        self.blocks = list(blocks)
        self.site = site


class Generator:
    def __init__(self, rng, name, max_statements=18):
        self.rng = rng
        self.name = name
        self.next_id = 0
        self.next_name = 0
        self.sites = 0  # branch and loop sites share one numbering (fuzz_harness.h, Coverage)
        self.branch_sites = 0
        self.loop_sites = 0
        self.statements_left = max_statements
        # After a return whose condition is staged, everything after it runs under a staged guard
        # (its do-return flag is a tensor): as if inside a staged if, for the jump rules of Scope.
        self.staged_return = False

    # ---- names and sites -------------------------------------------------------------------
    def fresh(self, prefix):
        self.next_name += 1
        return f"{prefix}{self.next_name}"

    def node(self, kind, render, blocks=(), site=None):
        self.next_id += 1
        return Node(self.next_id, kind, render, blocks, site)

    def branch_site(self):
        self.branch_sites += 1
        self.sites += 1
        return self.sites - 1

    def loop_site(self):
        self.loop_sites += 1
        self.sites += 1
        return self.sites - 1

    # ---- expressions -----------------------------------------------------------------------
    def int_leaf(self, scope):
        r = self.rng.random()
        readable = scope.ints + scope.readonly_ints
        if r < 0.45 and readable:
            return lit(self.rng.choice(readable))
        if r < 0.65:
            return lit(self.rng.choice(INT_PARAMS))
        if r < 0.8:
            c = self.rng.choice(INT_CONSTS)
            return lit(str(c) if c >= 0 else f"({c})", tensor=False)
        if r < 0.85:
            return lit("k", tensor=False)
        if r < 0.9:
            return tensor_or_ref("ag::reduce_sum(v)", "agfuzz::reduce_sum(v)")
        if r < 0.93:
            return tensor_or_ref("ag::reduce_max(v)", "agfuzz::reduce_max(v)")
        if r < 0.94:
            return lit("ta.size()")
        if r < 0.96:
            return tensor_or_ref("acc.value()", "acc")
        return lit(self.rng.choice(["ta.read(0)", "ta.read(ta.size() - 1)"]))

    def int_expr(self, scope, depth=0):
        if depth >= 2 or self.rng.random() < 0.35:
            return self.int_leaf(scope)
        r = self.rng.random()
        left, right = self.int_expr(scope, depth + 1), self.int_expr(scope, depth + 1)
        if r < 0.5:
            op = self.rng.choice(["+", "-", "*", "+", "-"])
            return Expr(lambda m: f"({int_value(left)(m)} {op} {right(m)})")
        if r < 0.65:
            d = self.rng.choice(DIVISORS)
            op = self.rng.choice(["/", "%"])
            return Expr(lambda m: f"({int_value(left)(m)} {op} {d if d > 0 else f'({d})'})")
        if r < 0.8:
            fn = self.rng.choice(["maximum", "minimum"])
            return Expr(lambda m: f"{'ag' if m == 'tensor' else 'agfuzz'}::{fn}({int_value(left)(m)}, {int_value(right)(m)})")
        if r < 0.86:
            cond = self.cond(scope, depth + 1)
            return Expr(lambda m: f"({cond(m)} ? {int_value(left)(m)} : {int_value(right)(m)})")
        if r < 0.92:  # int arms: an int in C++, a tensor once a tensor condition is converted
            cond = self.cond(scope, depth + 1)
            x, y = self.rng.choice(INT_CONSTS), self.rng.choice(INT_CONSTS)
            return Expr(lambda m: f"({cond(m)} ? {x} : {y})", tensor=False)
        if r < 0.96:  # a call of another AG_FUNCTION, with control flow of its own (HELPER)
            return Expr(lambda m: f"agfuzz_helper{'' if m == 'tensor' else '_ref'}({int_value(left)(m)}, {int_value(right)(m)})")
        return Expr(lambda m: f"(-{int_value(left)(m)})")

    def float_leaf(self, scope):
        r = self.rng.random()
        if r < 0.45 and scope.floats:
            return lit(self.rng.choice(scope.floats))
        if r < 0.65:
            return lit("x")
        if r < 0.85:
            return lit(self.rng.choice(FLOAT_CONSTS), tensor=False)
        e = self.int_leaf(scope)
        return Expr(lambda m: f"ag::cast(ag::Tensor({e(m)}), ag::float32)" if m == "tensor"
                    else f"agfuzz::to_float(agfuzz::I32({e(m)}))")

    def float_value(self, e):
        if e.tensor:
            return e
        return Expr(lambda mode: ("ag::Tensor(" if mode == "tensor" else "float(") + e(mode) + ")")

    def float_expr(self, scope, depth=0):
        if depth >= 2 or self.rng.random() < 0.4:
            return self.float_leaf(scope)
        r = self.rng.random()
        left = self.float_expr(scope, depth + 1)
        if r < 0.45:
            right = self.float_expr(scope, depth + 1)
            op = self.rng.choice(["+", "-"])
            return Expr(lambda m: f"({self.float_value(left)(m)} {op} {right(m)})")
        if r < 0.7:
            c = self.rng.choice(FLOAT_CONSTS)
            return Expr(lambda m: f"({self.float_value(left)(m)} * {c})")
        if r < 0.85:
            right = self.float_expr(scope, depth + 1)
            fn = self.rng.choice(["maximum", "minimum"])
            return Expr(lambda m: f"{'ag' if m == 'tensor' else 'agfuzz'}::{fn}({self.float_value(left)(m)}, {self.float_value(right)(m)})")
        right = self.float_expr(scope, depth + 1)
        cond = self.cond(scope, depth + 1)
        return Expr(lambda m: f"({cond(m)} ? {self.float_value(left)(m)} : {self.float_value(right)(m)})")

    def cond(self, scope, depth=0):
        r = self.rng.random()
        if depth < 2 and r < 0.25:
            left, right = self.cond(scope, depth + 1), self.cond(scope, depth + 1)
            op = self.rng.choice(["&&", "||"])
            return Expr(lambda m: f"({left(m)} {op} {right(m)})", left.tensor or right.tensor)
        if depth < 2 and r < 0.32:
            inner = self.cond(scope, depth + 1)
            return Expr(lambda m: f"!{inner(m)}", inner.tensor)
        if r < 0.42:  # plain C++: decided while tracing, no staging
            return self.plain_cond()
        if r < 0.55:
            left, right = self.float_expr(scope, 1), self.float_expr(scope, 1)
            op = self.rng.choice(CMP_OPS[:4])
            return Expr(lambda m: f"({self.float_value(left)(m)} {op} {right(m)})")
        left, right = self.int_expr(scope, 1), self.int_expr(scope, 1)
        op = self.rng.choice(CMP_OPS)
        return Expr(lambda m: f"({int_value(left)(m)} {op} {right(m)})")

    # ---- statements ------------------------------------------------------------------------
    def block(self, scope, min_len=1, max_len=4):
        out = []
        n = self.rng.randint(min_len, max_len)
        for _ in range(n):
            if self.statements_left <= 0:
                break
            out.append(self.statement(scope))
        return out

    def statement(self, scope):
        self.statements_left -= 1
        compound_ok = scope.depth < 3
        choices = [("assign_int", 5), ("assign_float", 2), ("assign_vec", 1), ("append", 1), ("local", 1),
                   ("variable", 1)]
        if compound_ok:
            choices += [("if", 4), ("while", 2), ("do", 1), ("range_for", 2), ("tensor_for", 1), ("c_for", 1),
                        ("plain_for", 1)]
            if not self.staged_return:  # its cases' breaks would be guarded by the return's flag
                choices += [("switch", 1)]
        staged_since_loop = scope.staged_since_loop or self.staged_return
        under_staged = scope.under_staged or self.staged_return
        if scope.in_loop and not (scope.innermost_plain and staged_since_loop):
            choices += [("break", 2), ("continue", 2)]
        if not (scope.in_plain_loop and under_staged) and not scope.in_switch:
            choices += [("return", 1)]
        kinds = [c for c, _ in choices]
        weights = [w for _, w in choices]
        kind = self.rng.choices(kinds, weights)[0]
        return getattr(self, "stmt_" + kind)(scope)

    def stmt_assign_int(self, scope):
        var = self.rng.choice(scope.ints)
        op = self.rng.choice(["=", "+=", "-=", "=", "*="])
        e = self.int_expr(scope)
        return self.node("assign", lambda m, body: [f"{var} {op} {e(m)};"])

    def stmt_assign_float(self, scope):
        var = self.rng.choice(scope.floats)
        op = self.rng.choice(["=", "+=", "-="])
        e = self.float_expr(scope)
        return self.node("assign", lambda m, body: [f"{var} {op} {e(m)};"])

    def stmt_assign_vec(self, scope):
        op = self.rng.choice(["+", "-", "*"])
        e = self.int_expr(scope, 1)
        return self.node("assign", lambda m, body: [f"w = w {op} {int_value(e)(m)};"])

    def stmt_variable(self, scope):
        """A side effect on the Variable the harness passes by reference (ordered with its reads)."""
        e = self.int_expr(scope, 1)
        add = self.rng.random() < 0.7

        def render(m, body):
            if m == "ref":
                return [f"acc {'+=' if add else '='} {int_value(e)(m)};"]
            return [f"acc.{'assign_add' if add else 'assign'}({e(m)});"]

        return self.node("variable", render)

    def stmt_append(self, scope):
        e = self.int_expr(scope, 1)
        tf_style = self.rng.random() < 0.5

        def render(m, body):
            if m == "ref":
                return [f"ta.append({int_value(e)(m)});"]
            return [f"ta = ta.write(ta.size(), {e(m)});" if tf_style else f"ta.write(ta.size(), {e(m)});"]

        return self.node("append", render)

    def stmt_local(self, scope):
        name = self.fresh("t")
        e = self.int_expr(scope)
        scope.ints.append(name)  # readable and assignable after it, in this block
        return self.node("local", lambda m, body: [f"{'ag::Tensor' if m == 'tensor' else 'agfuzz::I32'} {name} = {e(m)};"])

    def stmt_switch(self, scope):
        """A plain C++ switch on `k` (decided while tracing) around staged code. Its cases get no
        break, continue or return of their own: a break there would leave the switch, and a staged
        return would guard the case's closing break; the rewriter reports a break out of a switch
        under a staged condition (rewriter-diagnostics.md)."""
        inner = scope.inner(in_loop=False, in_switch=True)
        cases = [self.block(inner.inner(), 1, 2) for _ in range(3)]

        def render(m, body):
            lines = ["switch (k) {"]
            for label, block in zip(["case 0:", "case 1:", "default:"], cases):
                lines += [f"  {label} {{"] + indent(body(block), 4) + ["    break;", "  }"]
            return lines + ["}"]

        return self.node("switch", render, cases)

    def staged_scope(self, scope, staged):
        return scope.inner(staged_since_loop=scope.staged_since_loop or staged, under_staged=scope.under_staged or staged)

    def stmt_if(self, scope):
        site = self.branch_site()
        c = self.cond(scope)
        then = self.block(self.staged_scope(scope, c.tensor))
        orelse = self.block(self.staged_scope(scope, c.tensor), 0, 3) if self.rng.random() < 0.6 else []
        # else-if chains come from an else holding exactly one if
        if self.rng.random() < 0.3 and self.statements_left > 0 and scope.depth < 3:
            elif_scope = self.staged_scope(scope, c.tensor)
            elif_scope.depth = scope.depth
            orelse = [self.stmt_if(elif_scope)]

        def render(m, body):
            cond = c(m) if m == "tensor" else f"cov.branch({site}, {c(m)})"
            lines = [f"if ({cond}) {{"] + indent(body(then)) + ["}"]
            rest = body(orelse)
            if rest:
                if len(orelse) == 1 and orelse[0].kind == "if" and rest[0].startswith("if ("):
                    lines[-1] = "} else " + rest[0]
                    lines += rest[1:]
                else:
                    lines[-1] = "} else {"
                    lines += indent(rest) + ["}"]
            return lines

        return self.node("if", render, [then, orelse], site=("branch", site))

    def plain_cond(self):
        return lit(self.rng.choice(["flag", "(k > 1)", "(k == 0)", "!flag"]), tensor=False)

    def jump_guard(self, scope, jump, plain=False):
        site = self.branch_site()
        c = self.plain_cond() if plain else self.cond(scope)
        before = self.block(self.staged_scope(scope, c.tensor), 0, 1) if self.rng.random() < 0.4 else []

        def render(m, body):
            cond = c(m) if m == "tensor" else f"cov.branch({site}, {c(m)})"
            return [f"if ({cond}) {{"] + indent(body(before) + [jump(m)]) + ["}"]

        return before, render, site, c

    def stmt_break(self, scope):
        before, render, site, _ = self.jump_guard(scope, lambda m: "break;", plain=scope.innermost_plain)
        return self.node("if", render, [before], site=("branch", site))

    def stmt_continue(self, scope):
        before, render, site, _ = self.jump_guard(scope, lambda m: "continue;", plain=scope.innermost_plain)
        return self.node("if", render, [before], site=("branch", site))

    def stmt_return(self, scope):
        before, render, site, cond = self.jump_guard(scope, lambda m: RETURN[m], plain=scope.in_plain_loop)
        if cond.tensor or scope.under_staged:
            self.staged_return = True
        return self.node("if", render, [before], site=("branch", site))

    def loop(self, scope, kind, header_tensor, header_ref, counter=None, loop_var=None, plain=False):
        site = self.loop_site()
        inner = scope.inner(in_loop=True, in_plain_loop=scope.in_plain_loop or plain, innermost_plain=plain,
                            staged_since_loop=False, under_staged=scope.under_staged or not plain)
        if counter:
            inner.readonly_ints.append(counter)
        if loop_var:
            inner.readonly_ints.append(loop_var)
        body_nodes = self.block(inner, 1, 4)

        def render(m, body):
            trips = f"tr{site}"
            inner_lines = body(body_nodes)
            if m == "tensor":
                return header_tensor(inner_lines)
            return ["{", f"  agfuzz::Trips {trips}(cov, {site});"] + indent(header_ref(inner_lines, f"{trips}.iteration();")) + ["}"]

        return self.node(kind, render, [body_nodes], site=("loop", site))

    def stmt_while(self, scope):
        c, bound = self.fresh("c"), self.rng.choice(BOUNDS)
        extra = self.cond(scope, 1) if self.rng.random() < 0.4 else None
        test = f"{c} < {bound}" + (f" && {{extra}}" if extra else "")

        def t(lines):
            return ["{", f"  ag::Tensor {c} = 0;", f"  while ({fill(test, extra, 'tensor')}) {{", f"    {c} += 1;"] + \
                indent(lines, 4) + ["  }", "}"]

        def r(lines, it):
            return [f"agfuzz::I32 {c} = 0;", f"while ({fill(test, extra, 'ref')}) {{", f"  {it}", f"  {c} += 1;"] + \
                indent(lines) + ["}"]

        return self.loop(scope, "while", t, r, counter=c)

    def stmt_do(self, scope):
        c, bound = self.fresh("c"), self.rng.choice(BOUNDS)
        extra = self.cond(scope, 1) if self.rng.random() < 0.4 else None
        test = f"{c} < {bound}" + (f" && {{extra}}" if extra else "")

        def t(lines):
            return ["{", f"  ag::Tensor {c} = 0;", "  do {", f"    {c} += 1;"] + indent(lines, 4) + \
                [f"  }} while ({fill(test, extra, 'tensor')});", "}"]

        def r(lines, it):
            return [f"agfuzz::I32 {c} = 0;", "do {", f"  {it}", f"  {c} += 1;"] + indent(lines) + \
                [f"}} while ({fill(test, extra, 'ref')});"]

        return self.loop(scope, "do", t, r, counter=c)

    def for_loop(self, scope, kind, tensor_header, ref_header, **loop_args):
        """A loop whose header is one line: `for (...)` in both worlds."""
        def t(lines):
            return [f"{tensor_header} {{"] + indent(lines) + ["}"]

        def r(lines, it):
            return [f"{ref_header} {{", f"  {it}"] + indent(lines) + ["}"]

        return self.loop(scope, kind, t, r, **loop_args)

    def stmt_range_for(self, scope):
        i, bound = self.fresh("r"), self.rng.choice(BOUNDS)
        return self.for_loop(scope, "range_for", f"for (auto {i} : ag::range({bound}))",
                             f"for (agfuzz::I32 {i} = 0; {i} < agfuzz::I32({bound}); {i} += 1)", loop_var=i)

    def stmt_tensor_for(self, scope):
        e = self.fresh("e")
        return self.for_loop(scope, "tensor_for", f"for (auto {e} : v)", f"for (agfuzz::I32 {e} : v)", loop_var=e)

    def stmt_c_for(self, scope):
        c, bound = self.fresh("c"), self.rng.choice(BOUNDS)
        return self.for_loop(scope, "c_for", f"for (ag::Tensor {c} = 0; {c} < {bound}; {c} += 1)",
                             f"for (agfuzz::I32 {c} = 0; {c} < agfuzz::I32({bound}); {c} += 1)", counter=c)

    def stmt_plain_for(self, scope):
        j = self.fresh("j")
        header = f"for (int {j} = 0; {j} < k; ++{j})"
        return self.for_loop(scope, "plain_for", header, header, plain=True)


RETURN = {
    "tensor": "return std::tuple<ag::Tensor, ag::Tensor>{RESULT_INTS_TENSOR, RESULT_FLOATS_TENSOR};",
    "ref": "return agfuzz::Result{RESULT_INTS_REF, RESULT_FLOATS_REF};",
}


def fill(test, extra, mode):
    return test.replace("{extra}", extra(mode)) if extra else test


def indent(lines, n=2):
    return [" " * n + l for l in lines]


class Program:
    def __init__(self, name, seed, ints, floats, inits, body, branch_sites, loop_sites):
        self.name = name
        self.seed = seed
        self.ints = ints
        self.floats = floats
        self.inits = inits  # (name, kind, Expr)
        self.body = body
        self.branch_sites = branch_sites
        self.loop_sites = loop_sites

    def nodes(self):
        """Every statement node, parents before children."""
        out = []

        def walk(block):
            for n in block:
                out.append(n)
                for b in n.blocks:
                    walk(b)

        walk(self.body)
        return out

    def render(self, mode, removed=frozenset(), unwrapped=frozenset()):
        def body(block):
            lines = []
            for n in block:
                if n.id in removed:
                    continue
                if n.id in unwrapped:
                    for b in n.blocks:
                        lines += body(b)
                    continue
                lines += n.render(mode, body)
            return lines

        ints_t = "ag::stack({" + ", ".join(self.ints + ["ag::reduce_sum(w)", "ta.size()", "ag::reduce_sum(ta.stack())",
                                                         "acc.value()"]) + "})"
        floats_t = "ag::stack({" + ", ".join(self.floats) + "})"
        ints_r = "{" + ", ".join(f"{v}.v" for v in self.ints) + \
            ", agfuzz::reduce_sum(w).v, ta.size().v, agfuzz::reduce_sum(ta).v, acc.v}"
        floats_r = "{" + ", ".join(self.floats) + "}"

        def results(line):
            return (line.replace("RESULT_INTS_TENSOR", ints_t).replace("RESULT_FLOATS_TENSOR", floats_t)
                    .replace("RESULT_INTS_REF", ints_r).replace("RESULT_FLOATS_REF", floats_r))

        if mode == "tensor":
            head = [f"AG_FUNCTION std::tuple<ag::Tensor, ag::Tensor> {self.name}(ag::Tensor a, ag::Tensor b, "
                    f"ag::Tensor x, ag::Tensor v, int k, bool flag, ag::Variable& acc) {{"]
            decl = {"int": "ag::Tensor", "float": "ag::Tensor"}
            setup = ["ag::Tensor w = v * 2;", "ag::TensorArray ta(ag::int32);", "ta.write(0, a);"]
        else:
            head = [f"agfuzz::Result {self.name}_ref(const agfuzz::Input& in, agfuzz::Coverage& cov) {{",
                    "  const agfuzz::I32 a = in.a, b = in.b;", "  const float x = in.x;",
                    "  agfuzz::IVec v;", "  for (int32_t e : in.v) v.e.push_back(e);",
                    "  const int k = in.k;", "  const bool flag = in.flag;", "  (void)cov, (void)flag, (void)k, (void)x, (void)b;"]
            decl = {"int": "agfuzz::I32", "float": "float"}
            setup = ["agfuzz::IVec w = v * agfuzz::I32(2);", "agfuzz::IList ta;", "ta.append(a);",
                     "agfuzz::I32 acc = 0;  // the Variable, which the harness sets to 0 before each call"]
        lines = list(head)
        lines += indent(setup)
        for name, kind, e in self.inits:
            lines.append(f"  {decl[kind]} {name} = {e(mode)};")
        lines += indent(body(self.body))
        lines.append("  " + RETURN[mode])
        lines.append("}")
        return "\n".join(results(l) for l in lines) + "\n"

    def registration(self):
        return f"AGFUZZ_PROGRAM({self.name}, {self.branch_sites}, {self.loop_sites}, {self.seed});\n"

    def source(self, removed=frozenset(), unwrapped=frozenset()):
        return (self.render("tensor", removed, unwrapped) + "\n" + self.render("ref", removed, unwrapped) + "\n" +
                self.registration())


def with_canary(program):
    """`program` with a first statement whose reference is deliberately wrong (i0 += 1 against
    i0 += 2): the fuzzer must report it, and reduce the program to that statement alone."""
    g = Generator(random.Random(0), program.name)
    g.next_id = max([n.id for n in program.nodes()] + [0]) + 1
    canary = g.node("canary", lambda m, body: ["i0 += 1;" if m == "tensor" else "i0 += 2;"])
    program.body.insert(0, canary)
    return program


def generate(seed, index, max_statements=18):
    """Program `index` of the batch of `seed`: the same pair always gives the same program."""
    rng = random.Random(seed * 1_000_003 + index)
    name = f"p{seed}_{index:05d}"
    g = Generator(rng, name, max_statements=rng.randint(4, max_statements))
    ints = [f"i{n}" for n in range(rng.randint(2, 3))]
    floats = [f"f{n}" for n in range(rng.randint(1, 2))]
    base = Scope([], [], [], False, 0)
    inits = []
    for v in ints:
        inits.append((v, "int", g.int_expr(base, 1)))
        base.ints.append(v)
    for v in floats:
        inits.append((v, "float", g.float_expr(base, 1)))
        base.floats.append(v)
    body = []
    while g.statements_left > 0:
        body.append(g.statement(base))
    return Program(name, rng.randint(1, 2**31 - 2), ints, floats, inits, body, g.branch_sites, g.loop_sites)


HEADER = """// Generated by tests/fuzz/programs/fuzz_programs.py ({what}). Each AG_FUNCTION is followed by its
// plain C++ reference; the harness runs both (fuzz_harness.h).
#include <ag/ag.h>

#include <tuple>

#include "fuzz_harness.h"

// Called by the programs: an AG_FUNCTION calling an AG_FUNCTION, whose early return and break
// are staged inside the caller's trace (and inside its staged loops and branches).
AG_FUNCTION static ag::Tensor agfuzz_helper(ag::Tensor p, ag::Tensor q) {
  if (p > q + 3) return p - q;
  ag::Tensor s = 0;
  for (auto i : ag::range(4)) {
    if (i * 2 > p) break;
    s += q - i;
  }
  return s;
}
[[maybe_unused]] static agfuzz::I32 agfuzz_helper_ref(agfuzz::I32 p, agfuzz::I32 q) {
  if (p > q + 3) return p - q;
  agfuzz::I32 s = 0;
  for (agfuzz::I32 i = 0; i < 4; i += 1) {
    if (i * 2 > p) break;
    s += q - i;
  }
  return s;
}

"""


def translation_unit(programs, what, reductions=None):
    parts = [HEADER.replace("{what}", what)]
    for p in programs:
        removed, unwrapped = (reductions or {}).get(p.name, (frozenset(), frozenset()))
        parts.append(p.source(removed, unwrapped))
        parts.append("\n")
    return "".join(parts)
