"""Random well-formed Janus programs, and the differential check of one against the machine.

``random_program(seed)`` writes a Janus program from a seeded generator: a main with
int scalars, an array and a stack, one or two procedures with parameters, and bodies
drawn from every statement (updates with ``+ - * / % & | ^``, swaps, ``if ... fi``
with an assertion that holds, counted ``from`` loops with and without a do-part, locals,
push/pop pairs, calls and uncalls).  Divisors are mostly ``(e | 1)`` (odd,
never zero) and sometimes a bare variable, so a few programs divide by zero.

``differential(source, seed)`` runs the program on the interpreter and, compiled, on
the reference machine, forward from main's declared values and backward from a random
state, and returns what differs (empty: they agree, or both fault).  Used by
tests/compiler/frontend/janus/test_differential.py (a bounded sample) and bench/janus_campaign.py.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

SCALARS = ("x", "y", "z", "w")
ARRAY, ARRAY_SIZE = "a", 4
STACK = "s"
_ARITH = ("+", "-", "*", "/", "%", "&", "|", "^")
_COMPARE = ("<", "<=", ">", ">=", "=", "!=")


@dataclass
class _Scope:
    ints: list[str]  # readable and writable int scalars
    array: str | None
    stack: str | None
    counters: list[str]  # loop counters in scope: readable, never written


class _Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.fresh = 0
        self.procs: list[tuple[str, list[str]]] = []  # (name, parameter kinds)

    def name(self, prefix: str) -> str:
        self.fresh += 1
        return f"{prefix}{self.fresh}"

    # --- expressions ---

    def leaf(self, scope: _Scope, avoid: set[str]) -> str:
        r = self.rng.random()
        ints = [v for v in scope.ints + scope.counters if v not in avoid]
        if r < 0.3 or not ints:
            return str(self.rng.choice([0, 1, 2, 3, 5, 7, -1, -3, 100, 65535, 123456]))
        if r < 0.45 and scope.array and scope.array not in avoid:
            return f"{scope.array}[{self.index(scope)}]"
        return self.rng.choice(ints)

    def index(self, scope: _Scope) -> str:
        small = [c for c in scope.counters if c.startswith("c")]
        if small and self.rng.random() < 0.5:
            return self.rng.choice(small)
        return str(self.rng.randrange(ARRAY_SIZE))

    def expr(self, scope: _Scope, avoid: set[str], depth: int = 2, top: bool = True) -> str:
        """An int expression; a division (its operands leaves, the divisor mostly odd)
        only at the top, so the machine's scratch registers suffice."""
        if depth == 0 or self.rng.random() < 0.35:
            return self.leaf(scope, avoid)
        op = self.rng.choice(_ARITH if top else _ARITH[:3] + _ARITH[5:])
        if op in ("/", "%"):
            divisor = self.leaf(scope, avoid)
            right = divisor if self.rng.random() < 0.1 or divisor.lstrip("-").isdigit() \
                else f"({divisor} | 1)"
            left = self.leaf(scope, avoid)
            if divisor in ("0", "(0 | 1)"):
                right = "(0 | 1)" if self.rng.random() < 0.9 else "0"
            return f"({left} {op} {right})"
        left = self.expr(scope, avoid, depth - 1, False)
        right = self.expr(scope, avoid, depth - 1, False)
        return f"({left} {op} {right})"

    def condition(self, scope: _Scope, avoid: set[str], depth: int = 1,
                  top: bool = True) -> str:
        """A condition; divisions only in a comparison that is the whole condition."""
        r = self.rng.random()
        if depth and r < 0.25:
            op = self.rng.choice(("&&", "||"))
            return (f"({self.condition(scope, avoid, depth - 1, False)} {op} "
                    f"{self.condition(scope, avoid, depth - 1, False)})")
        if depth and r < 0.35:
            return f"!({self.condition(scope, avoid, depth - 1, top)})"
        if scope.stack and scope.stack not in avoid and r < 0.42:
            return f"empty({scope.stack})"
        return (f"{self.expr(scope, avoid, 1, top)} {self.rng.choice(_COMPARE)} "
                f"{self.expr(scope, avoid, 1, False)}")

    # --- statements ---

    def block(self, scope: _Scope, depth: int, size: int | None = None) -> list[str]:
        n = size if size is not None else self.rng.randint(1, 3)
        out: list[str] = []
        for _ in range(n):
            out += self.stmt(scope, depth)
        return out

    def stmt(self, scope: _Scope, depth: int) -> list[str]:
        kinds = ["update"] * 6 + ["swap"]
        if depth > 0:
            kinds += ["if"] * 2 + ["loop"] * 2 + ["local"]
            if scope.stack:
                kinds.append("stack")
            if self.procs:
                kinds += ["call"] * 2
        kind = self.rng.choice(kinds)
        return getattr(self, "stmt_" + kind)(scope, depth)

    def target(self, scope: _Scope) -> tuple[str, set[str]]:
        if scope.array and self.rng.random() < 0.3:
            return f"{scope.array}[{self.index(scope)}]", {scope.array}
        v = self.rng.choice(scope.ints)
        return v, {v}

    def stmt_update(self, scope: _Scope, depth: int) -> list[str]:
        if not scope.ints:
            return ["skip"]
        target, avoid = self.target(scope)
        op = self.rng.choice(("+=", "-=", "^="))
        return [f"{target} {op} {self.expr(scope, avoid)}"]

    def stmt_swap(self, scope: _Scope, depth: int) -> list[str]:
        places = list(scope.ints)
        if scope.array:
            i, j = self.rng.sample(range(ARRAY_SIZE), 2)
            places += [f"{scope.array}[{i}]", f"{scope.array}[{j}]"]
        if len(places) < 2:
            return ["skip"]
        a, b = self.rng.sample(places, 2)
        return [f"{a} <=> {b}"]

    def stmt_if(self, scope: _Scope, depth: int) -> list[str]:
        # the branches may not write what the condition reads: its assertion is itself
        frozen = set(self.rng.sample(scope.ints, min(len(scope.ints), 2)))
        reads = [v for v in scope.ints if v in frozen]
        cond_scope = _Scope(reads, None, None, scope.counters)
        cond = self.condition(cond_scope, set())
        inner = _Scope([v for v in scope.ints if v not in frozen], scope.array, scope.stack,
                       scope.counters)
        then = self.block(inner, depth - 1)
        lines = [f"if {cond} then", *_indent(then)]
        if self.rng.random() < 0.7:
            lines += ["else", *_indent(self.block(inner, depth - 1))]
        return lines + [f"fi {cond}"]

    def stmt_loop(self, scope: _Scope, depth: int) -> list[str]:
        c = self.name("c")
        k = self.rng.randint(1, ARRAY_SIZE)
        inner = _Scope(scope.ints, scope.array, scope.stack, scope.counters + [c])
        body = self.block(inner, depth - 1)
        if self.rng.random() < 0.5:
            loop = [f"from {c} = 0 do", *_indent(body + [f"{c} += 1"]), "loop",
                    *_indent(self.block(inner, depth - 1)), f"until {c} = {k}"]
        else:
            loop = [f"from {c} = 0 loop", *_indent(body + [f"{c} += 1"]), f"until {c} = {k}"]
        return [f"local int {c} = 0", *_indent(loop), f"delocal int {c} = {k}"]

    def stmt_local(self, scope: _Scope, depth: int) -> list[str]:
        # t is read in its body, never written, so delocal asserts the same value
        t = self.name("t")
        frozen = set(self.rng.sample(scope.ints, min(len(scope.ints), 1)))
        value = self.expr(_Scope(sorted(frozen), None, None, scope.counters), set(), 1)
        inner = _Scope([v for v in scope.ints if v not in frozen], scope.array, scope.stack,
                       scope.counters + [t])
        return [f"local int {t} = {value}", *_indent(self.block(inner, depth - 1)),
                f"delocal int {t} = {value}"]

    def stmt_stack(self, scope: _Scope, depth: int) -> list[str]:
        v = self.rng.choice(scope.ints)
        inner = _Scope([x for x in scope.ints if x != v], scope.array, None, scope.counters)
        return [f"push({v}, {scope.stack})", *self.block(inner, depth - 1),
                f"pop({v}, {scope.stack})"]

    def stmt_call(self, scope: _Scope, depth: int) -> list[str]:
        name, kinds = self.rng.choice(self.procs)
        ints = list(scope.ints)
        self.rng.shuffle(ints)
        if kinds.count("int") > len(ints) or ("array" in kinds and not scope.array):
            return ["skip"]
        args = []
        for kind in kinds:
            args.append(ints.pop() if kind == "int" else scope.array)
        verb = self.rng.choice(("call", "uncall"))
        return [f"{verb} {name}({', '.join(args)})"]


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def random_program(seed: int) -> str:
    """The Janus source of a random, well-formed program."""
    g = _Generator(seed)
    procs_text: list[str] = []
    for _ in range(g.rng.randint(0, 2)):
        name = g.name("p")
        kinds = ["int", "int"] + (["array"] if g.rng.random() < 0.5 else [])
        params = ["int u", "int v"] + (["int b[]"] if "array" in kinds else [])
        scope = _Scope(["u", "v"], "b" if "array" in kinds else None, None, [])
        body = g.block(scope, depth=1, size=g.rng.randint(1, 3))
        procs_text += [f"procedure {name}({', '.join(params)})", *_indent(body),
                       ""]
        g.procs.append((name, kinds))
    scope = _Scope(list(SCALARS), ARRAY, STACK, [])
    body = g.block(scope, depth=2, size=g.rng.randint(2, 5))
    values = [g.rng.choice([0, 0, 1, 5, -7, 12, 1000, -40000, 2 ** 31 - 1, -2 ** 31])
              for _ in SCALARS]
    main = ["procedure main()"]
    main += [f"    int {v} = {value}" for v, value in zip(SCALARS, values)]
    array = ", ".join(str(g.rng.randint(-9, 9)) for _ in range(ARRAY_SIZE))
    main += [f"    int {ARRAY}[{ARRAY_SIZE}] = {{{array}}}", f"    stack {STACK}"]
    main += _indent(body)
    return "\n".join(procs_text + main) + "\n"


def machine_inputs(state: dict) -> dict[str, int]:
    """A Janus store as the compiled program's declared names."""
    from revasm.compiler.frontend.janus.checks import STACK_CAPACITY
    from revasm.compiler.frontend.janus.lowering import DEPTH
    out: dict[str, int] = {}
    for name, value in state.items():
        if name == STACK:
            words = list(value) + [0] * (STACK_CAPACITY - len(value))
            out.update({f"{name}.{k}": v for k, v in enumerate(words)})
            out[name + DEPTH] = len(value)
        elif isinstance(value, list):
            out.update({f"{name}.{k}": v for k, v in enumerate(value)})
        else:
            out[name] = value
    return out


def differential(source: str, seed: int, engine: str = "reference") -> list[str]:
    """What differs between the interpreter and the machine on ``source``: forward from
    main's declared values (and back again on the machine), and backward from a random
    state.  Empty when they agree (both faulting counts as agreeing)."""
    from revasm.compiler.api import compile_janus_source
    from revasm.compiler.frontend.janus import check_program, parse_janus
    from revasm.compiler.frontend.janus.interpreter import initial_store

    program = check_program(parse_janus(source, "random.ja"))
    compiled = compile_janus_source(source, "random.ja")
    rng = random.Random(seed)
    start = initial_store(program)
    problems = _compare(program, compiled, start, False, engine)
    state = {name: ([rng.randint(-2 ** 31, 2 ** 31 - 1) for _ in value] if name != STACK
                    else [])
             if isinstance(value, list) else rng.choice([0, 1, -5, rng.randint(-999, 999),
                                                         rng.randint(-2 ** 31, 2 ** 31 - 1)])
             for name, value in start.items()}
    return problems + _compare(program, compiled, state, True, engine)


def _compare(program, compiled, state: dict, backward: bool, engine: str) -> list[str]:
    import revasm
    from revasm.compiler.frontend.janus.interpreter import JanusFault, StepLimit, run
    from revasm.compiler.frontend.janus.store import janus_store

    way = "backward" if backward else "forward"
    try:
        expected = run(program, state, backward=backward, max_steps=200_000)
    except StepLimit:
        return []  # too long to compare here
    except JanusFault as exc:
        result = revasm.run(compiled.image, machine_inputs(state), reverse=backward, engine=engine,
                            max_steps=10 ** 7)
        if result.status == "fault":
            return []
        return [f"{way}: the interpreter faults ({exc}), the machine finishes"]
    result = revasm.run(compiled.image, machine_inputs(state), reverse=backward, engine=engine,
                        max_steps=10 ** 7)
    if result.status != "finished":
        return [f"{way}: the machine faults ({result.fault}), the interpreter finishes"]
    got = janus_store(result.named)
    if got != expected:
        return [f"{way}: machine {got} != interpreter {expected}"]
    again = revasm.run(compiled.image, machine_inputs(got), reverse=not backward, engine=engine,
                       max_steps=10 ** 7)
    if again.status != "finished" or janus_store(again.named) != state:
        return [f"{way}: the machine's run the other way does not restore {state}"]
    return []
