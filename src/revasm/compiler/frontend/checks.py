"""Static checks on the IR, each reported at a Python source position.

* shared read and write: ``y += y * x`` (and, for gradients, ``y += x * x``);
  the same variable passed twice to a call; SWAP/ROT of a variable with itself;
* a loop variable, or a variable a range bound reads, modified in the loop body;
* an ``if`` without a postcondition whose body changes what its condition reads;
* a constant, table element or loop variable passed where the callee writes;
* an ancilla not provably restored to the value it is freed with.

The ancilla proof is symbolic: each update of an ancilla leaves a pending
term (``+= e``, a call, a loop...), its exact inverse cancels it, and a write
to a variable a pending term reads makes that term uncancellable.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import CompileError, SourcePos
from ..ir import nodes as ir
from ..ir.inverse import invert_block
from ..ir.printer import expr_text
from ..ir.proofs import Proofs


def check_module(module: ir.Module, *, for_gradient: bool = False) -> Proofs:
    """Raise a CompileError for the first ill-formed statement; return what was proven."""
    writes = written_params(module)
    proofs = Proofs(written=writes)
    for f in module.functions.values():
        _FunctionChecker(module, f, writes, for_gradient, proofs).run()
    return proofs


# --- which parameters a function writes ----------------------------------------------------


def written_params(module: ir.Module) -> dict[str, set[int]]:
    """Function -> indices of the parameters it may change (through its calls too)."""
    result: dict[str, set[int]] = {name: set() for name in module.functions}
    # each function's writes of its own and its calls, found in one walk: only a call's
    # writes depend on the others', so a pass of the loop below looks at the calls alone
    # (each pass walked every statement: two walks of a long program with calls)
    summaries = []
    for name, f in module.functions.items():
        index = {p.name: k for k, p in enumerate(f.params)}
        own: set[str] = set()
        calls: list[ir.Call] = []
        for s in _walk(f.body):
            if isinstance(s, ir.Call):
                calls.append(s)
            else:
                own |= _direct_writes(s, result)
        summaries.append((name, index, own, calls))
    any_calls = any(calls for *_, calls in summaries)
    changed = True
    while changed:
        changed = False
        for name, index, own, calls in summaries:
            names = set(own)
            for c in calls:
                names |= _direct_writes(c, result)
            new = {index[n] for n in names if n in index}
            if not new <= result[name]:
                result[name] |= new
                changed = True
        # only a call's writes depend on the others': without calls, one pass is all
        changed = changed and any_calls
    return result


#: Statements that hold no statements: ``_walk`` and ``all_writes`` need not look for
#: nested bodies in them (four getattr a statement were a tenth of checking a long
#: program).  Exact types: a subclass is looked into as before.
_FLAT = frozenset({ir.Update, ir.Swap, ir.Rot, ir.Show, ir.Call, ir.Alloc, ir.Free})


def _walk(body: list[ir.Stmt]) -> Iterator[ir.Stmt]:
    for s in body:
        yield s
        if type(s) in _FLAT:
            continue
        for attr in ("head", "body", "then", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list) and not isinstance(s, ir.Unroutine):
                yield from _walk(inner)


def _base(e: ir.Expr) -> str | None:
    return e.name if isinstance(e, (ir.Var, ir.Index)) else None


def _names(*places: ir.Expr) -> set[str]:
    """The variables (and arrays) these places name; a constant names none."""
    return {name for name in map(_base, places) if name is not None}


def _direct_writes(s: ir.Stmt, writes: dict[str, set[int]]) -> set[str]:
    """Variables one statement writes itself (not its nested blocks)."""
    if isinstance(s, ir.Update):
        return _names(s.target)
    if isinstance(s, (ir.Swap, ir.Rot)):
        return _names(s.a, s.b)
    if isinstance(s, ir.Call):
        return _names(*(a for k, a in enumerate(s.args) if k in writes.get(s.func, ())))
    if isinstance(s, (ir.Alloc, ir.Free)):
        return {s.name}
    if isinstance(s, ir.For):
        return {s.var}
    return set()


def all_writes(body: list[ir.Stmt], writes: dict[str, set[int]]) -> dict[str, SourcePos]:
    """Every variable a block writes (nested blocks and ~routine bodies included)."""
    out: dict[str, SourcePos] = {}
    for s in body:
        for name in _direct_writes(s, writes):
            out.setdefault(name, s.pos)
        if type(s) in _FLAT:
            continue
        for attr in ("head", "body", "then", "orelse"):
            inner = getattr(s, attr, None)
            if isinstance(inner, list):
                for name, pos in all_writes(inner, writes).items():
                    out.setdefault(name, pos)
    return out


def reads(e: ir.Expr | None) -> set[str]:
    """Variables an expression reads (array names for elements, index variables too)."""
    if e is None:
        return set()
    if isinstance(e, ir.Var):
        return {e.name}
    if isinstance(e, ir.Index):
        out = {e.name}
        for i in e.indices:
            out |= reads(i)
        return out
    # the common nodes directly (the loops below give the same): looking up five
    # attributes of each node was a tenth of checking a long program
    if isinstance(e, ir.Const):
        return set()
    if isinstance(e, (ir.BinOp, ir.Compare)):
        return reads(e.left) | reads(e.right)
    out = set()
    for attr in ("left", "right", "operand"):
        out |= reads(getattr(e, attr, None))
    for attr in ("values", "args"):
        for v in getattr(e, attr, ()) or ():
            out |= reads(v)
    return out


# --- the checker ---------------------------------------------------------------------------


@dataclass
class _Event:
    """One effect on the state, kept until its exact inverse cancels it."""

    key: tuple
    sign: int
    pos: SourcePos
    text: str
    targets: set[str]
    deps: set[str]
    additive: bool = False
    toggle: bool = False
    barrier: bool = False  # an allocation or free: never cancels, nothing cancels across it
    dead: bool = False  # dropped from its log (the log's lists skip it)


class _Log:
    """The uncancelled effects of a block, in order (NiLang's compute/uncompute pairs).

    An event cancels the latest earlier event with the same key and opposite
    sign when nothing in between writes what they read (or, unless both are
    additions, what they write): then the pair's net effect is exactly nil.
    """

    def __init__(self) -> None:
        self._events: list[_Event] = []
        #: the events (not barriers) by key, and by (key, sign), in order: the candidate an
        #: event cancels is found in one look-up, not by scanning the whole log (which made
        #: checking quadratic in a function's length)
        self._by_key: dict[tuple, list[_Event]] = {}
        self._by_sign: dict[tuple, list[_Event]] = {}
        #: the events (not barriers) by each variable they change, in order; dropped ones
        #: stay in these lists (and in ``_events``, until there are as many as live ones)
        #: marked dead: a free's look-up and drop of what touches its ancilla cost what
        #: touches it, not the whole log (quadratic in a function's ancillas)
        self._by_target: dict[str, list[_Event]] = {}
        self._dead = 0

    @property
    def events(self) -> list[_Event]:
        return [e for e in self._events if not e.dead] if self._dead else self._events

    @events.setter
    def events(self, events: list[_Event]) -> None:
        self._events = []
        self._by_key, self._by_sign, self._by_target, self._dead = {}, {}, {}, 0
        self.extend(events)

    def extend(self, events: list[_Event]) -> None:
        """``events`` after the log's, as they are (no cancelling)."""
        for e in events:
            self._events.append(e)
            self._index(e)

    def _index(self, e: _Event) -> None:
        if not e.barrier:
            self._by_key.setdefault(e.key, []).append(e)
            self._by_sign.setdefault((e.key, e.sign), []).append(e)
            for name in e.targets:
                self._by_target.setdefault(name, []).append(e)

    def _unindex(self, e: _Event) -> None:
        e.dead = True
        del self._by_key[e.key][_last_index(self._by_key[e.key], e)]
        same = self._by_sign[(e.key, e.sign)]
        del same[_last_index(same, e)]

    def add(self, e: _Event) -> None:
        # the latest earlier event with e's key and the opposite sign (a toggle: any sign)
        candidates = [] if e.barrier else \
            self._by_key.get(e.key, []) if e.toggle else self._by_sign.get((e.key, -e.sign), [])
        if candidates:
            # from the latest event back to the candidate, stopping at the first that
            # writes what e reads (or, unless both add, what e writes): the walk is as long
            # as the nearest such event, not the log (a slice and a scan of everything
            # after the candidate made a 10^5-statement program's check quadratic)
            old = candidates[-1]
            for k in range(len(self._events) - 1, -1, -1):
                b = self._events[k]
                if b is old:
                    del self._events[k]
                    self._unindex(old)
                    return
                if b.dead:
                    continue
                if (b.targets & e.deps) or \
                        ((b.targets & e.targets) and not (b.additive and e.additive)):
                    break
        self._events.append(e)
        self._index(e)

    def touching(self, name: str) -> list[_Event]:
        """The live events that change ``name``, in order."""
        return [e for e in self._by_target.get(name, []) if not e.dead]

    def forget(self, name: str) -> None:
        """Drop the events that change ``name`` (a free ends what they did)."""
        for e in self._by_target.pop(name, []):
            if not e.dead:
                self._unindex(e)
                self._dead += 1
        if self._dead * 2 > len(self._events):
            self._events = [e for e in self._events if not e.dead]
            self._dead = 0

    def barrier(self, name: str, pos: SourcePos) -> None:
        """The variable ``name`` starts or ends here: a pair reading or writing it across
        this point is not an exact inverse pair (its value may differ on either side)."""
        self._events.append(_Event(("barrier", name, pos.line, pos.column, len(self._events)),
                                   1, pos, f"the allocation or free of {name}", {name}, set(),
                                   barrier=True))


def _last_index(events: list[_Event], event: _Event) -> int:
    """The index of ``event`` (this object) in ``events``, searched from the end."""
    for k in range(len(events) - 1, -1, -1):
        if events[k] is event:
            return k
    raise ValueError("the event is not in the log")


class _FunctionChecker:
    def __init__(self, module: ir.Module, f: ir.Function, writes: dict[str, set[int]],
                 for_gradient: bool, proofs: Proofs | None = None) -> None:
        self.proofs = proofs if proofs is not None else Proofs()
        self.module = module
        self.f = f
        self.writes = writes
        self.for_gradient = for_gradient
        self.loop_vars: set[str] = set()
        self.allocs: dict[str, ir.Alloc] = {}
        self._array_names: set[str] | None = None

    def error(self, pos: SourcePos, message: str, hint: str = "") -> CompileError:
        lines = self.module.source_lines
        line = lines[pos.line - 1] if 0 < pos.line <= len(lines) else ""
        return CompileError(pos, message, hint, line)

    def run(self) -> None:
        self.block(self.f.body, _Log(), inverted=False)

    # --- statements ------------------------------------------------------------------

    def block(self, body: list[ir.Stmt], log: _Log, inverted: bool) -> None:
        for s in body:
            self.stmt(s, log, inverted)

    def stmt(self, s: ir.Stmt, log: _Log, inverted: bool) -> None:
        if isinstance(s, ir.Update):
            self.check_update(s)
            name = _base(s.target)
            target = expr_text(s.target)
            text = expr_text(s.expr)
            deps = reads(s.expr) | (reads(s.target) - {name})
            if s.op == "^":
                log.add(_Event(("xor", target, text), 1, s.pos, f"{target} ^= {text}",
                               _names(s.target), deps, toggle=True))
            else:
                log.add(_Event(("add", target, text), 1 if s.op == "+" else -1, s.pos,
                               f"{target} {s.op}= {text}", _names(s.target), deps,
                               additive=True))
        elif isinstance(s, (ir.Swap, ir.Rot)):
            both = _names(s.a, s.b)
            if s.a == s.b:
                raise self.error(s.pos, f"{expr_text(s.a)} is exchanged with itself")
            if isinstance(s, ir.Rot) and reads(s.theta) & both and \
                    isinstance(s.a, ir.Var) and isinstance(s.b, ir.Var):
                raise self.error(s.pos, "the angle of ROT is one of the rotated variables")
            self.loop_var_written(s, both)
            deps = (reads(s.a) | reads(s.b)) - both
            if isinstance(s, ir.Swap):
                texts = tuple(sorted((expr_text(s.a), expr_text(s.b))))
                log.add(_Event(("swap", texts), 1, s.pos, f"SWAP{texts}", both, deps,
                               toggle=True))
            else:
                key = ("rot", expr_text(s.a), expr_text(s.b), expr_text(s.theta))
                log.add(_Event(key, -1 if s.inverse else 1, s.pos, "ROT(...)", both,
                               deps | reads(s.theta)))
        elif isinstance(s, ir.Call):
            self.check_call(s, log)
        elif isinstance(s, ir.Alloc):
            self.allocs[s.name] = s
            log.barrier(s.name, s.pos)
        elif isinstance(s, ir.Free):
            self.check_free(s, log)
        elif isinstance(s, ir.If):
            if not s.post_given:
                changed = all_writes(s.then + s.orelse, self.writes)
                hit = sorted(reads(s.pre) & set(changed))
                if hit:
                    name = hit[0]
                    raise self.error(changed[name], f"this branch changes {name!r}, which the "
                                                    f"condition of the if at line {s.pos.line} "
                                                    "reads, and the if has no postcondition",
                                     "give the condition that holds afterwards: "
                                     "if (pre, post): ...")
            self.compound(s, [s.then, s.orelse], log, inverted, reads(s.pre) | reads(s.post))
        elif isinstance(s, ir.While):
            self.compound(s, [s.head + s.body], log, inverted, reads(s.pre) | reads(s.post))
        elif isinstance(s, ir.For):
            bounds = reads(s.start) | reads(s.stop)
            changed = all_writes(s.body, self.writes)
            for name in [s.var, *sorted(bounds)]:
                if name in changed:
                    what = "loop variable" if name == s.var else "range bound"
                    raise self.error(changed[name], f"{what} {name!r} of the loop at line "
                                                    f"{s.pos.line} is modified in its body",
                                     "the loop runs backward by counting the same range; "
                                     "copy the value into an ancilla and change that")
            self.loop_vars.add(s.var)
            try:
                self.compound(s, [s.body], log, inverted, bounds)
            finally:
                self.loop_vars.discard(s.var)
        elif isinstance(s, ir.Routine):
            self.block(s.body, log, inverted)
        elif isinstance(s, ir.Unroutine):
            self.block(invert_block(s.body), log, not inverted)
        elif isinstance(s, ir.Block):
            body = invert_block(s.body) if s.inverted else s.body
            self.block(body, log, inverted != s.inverted)

    def compound(self, s: ir.Stmt, bodies: list[list[ir.Stmt]], log: _Log,
                 inverted: bool, condition_reads: set[str]) -> None:
        """Check the nested blocks; what they leave changed is one event for the whole."""
        # the branches' uncancelled events, in order: a list, not a _Log (indexed twice
        # over, a third of checking an if)
        events: list[_Event] = []
        for body in bodies:  # each branch has its own log: they never cancel each other
            branch = _Log()
            self.block(body, branch, inverted)
            events += branch.events
        # an allocation or free inside stops pairs outside from cancelling across the
        # block, unless the ancilla is the block's own (nothing outside can name it);
        # the walk for those is done only when there is an allocation or free
        if any(e.barrier for e in events):
            local = {x.name for body in bodies for x in _walk(body) if isinstance(x, ir.Alloc)}
            log.extend([e for e in events if e.barrier and e.key[1] not in local])
            events = [e for e in events if not e.barrier]
        if not events:
            return
        changed = set().union(*(e.targets for e in events))
        deps = set(condition_reads)
        for e in events:
            deps |= e.deps
        key = ("block", s.pos.line, s.pos.column)
        log.add(_Event(key, -1 if inverted else 1, s.pos,
                       f"the {type(s).__name__.lower()} statement", changed, deps - changed))

    def check_update(self, s: ir.Update) -> None:
        target = s.target
        name = _base(target)
        if self.loop_vars:  # (none: nothing to find)
            self.loop_var_written(s, _names(target))
        if name in self.module.tables:
            raise self.error(s.pos, f"{name!r} is a constant table")
        for e in _leaves(s.expr):
            if isinstance(target, ir.Var) and isinstance(e, ir.Var) and e.name == name:
                raise self.error(e.pos, f"{name!r} is both read and written by this statement",
                                 f"{expr_text(target)} {s.op}= f({name}) is not reversible; "
                                 "copy it into an ancilla first")
            if isinstance(target, ir.Index) and isinstance(e, ir.Index) and e == target:
                raise self.error(e.pos, f"{expr_text(e)} is both read and written by this "
                                        "statement", "copy it into an ancilla first")
        if self.for_gradient:
            for e in _subexpressions(s.expr):
                if isinstance(e, ir.BinOp) and e.op == "*" and e.left == e.right and \
                        not isinstance(e.left, ir.Const):
                    raise self.error(e.pos, f"{expr_text(e.left)} is read twice by one product, "
                                            "a shared read that gradient mode does not "
                                            "allow", f"write sq({expr_text(e.left)}), whose "
                                                     "gradient rule reads it once")

    def loop_var_written(self, s: ir.Stmt, names: set[str]) -> None:
        hit = names & self.loop_vars
        if hit:
            name = sorted(hit)[0]
            raise self.error(s.pos, f"loop variable {name!r} is modified in its loop",
                             "the loop runs backward by counting the same range; copy it into "
                             "an ancilla and change that")

    def check_call(self, s: ir.Call, log: _Log) -> None:
        callee = self.module.functions[s.func]
        seen: dict[str, ir.Expr] = {}
        written = self.writes.get(s.func, set())
        for k, arg in enumerate(s.args):
            param = callee.params[k]
            name = _base(arg)
            if name is not None and name in seen and (isinstance(arg, ir.Var) or
                                                      seen[name] == arg):
                raise self.error(arg.pos, f"{expr_text(arg)} is passed twice to {s.func}; the "
                                          "parameters would alias",
                                 "pass a copy held in an ancilla")
            if name is not None:
                seen[name] = arg
            is_array = isinstance(param.type, ir.ArrayType)
            if is_array != (isinstance(arg, ir.Var) and name in self._arrays()):
                kind = "an array" if is_array else "a scalar"
                raise self.error(arg.pos, f"parameter {param.name!r} of {s.func} is {kind} "
                                          f"({param.type}); {expr_text(arg)} is not")
            if k in written:
                if isinstance(arg, ir.Const):
                    raise self.error(arg.pos, f"{s.func} changes its parameter {param.name!r}, "
                                              f"so it cannot be given the constant "
                                              f"{expr_text(arg)}", "pass an ancilla holding it")
                if name in self.module.tables:
                    raise self.error(arg.pos, f"{s.func} changes its parameter {param.name!r}, "
                                              f"but {name!r} is a constant table")
                if name in self.loop_vars:
                    raise self.error(arg.pos, f"{s.func} changes its parameter {param.name!r}, "
                                              f"but {name!r} is a loop variable")
        changed = _names(*(a for k, a in enumerate(s.args) if k in written))
        if changed:
            args = ", ".join(expr_text(a) for a in s.args)
            deps = set().union(*(reads(a) for a in s.args)) - changed
            log.add(_Event(("call", s.func, args), -1 if s.uncall else 1, s.pos,
                           f"{'~' if s.uncall else ''}{s.func}({args})", changed, deps))

    def _arrays(self) -> set[str]:
        """The function's arrays (parameters, ancillas, tables): found once, not at each
        call (that walk of the whole body per call made checking quadratic)."""
        if self._array_names is None:
            names = {p.name for p in self.f.params if isinstance(p.type, ir.ArrayType)}
            names |= {s.name for s in _walk(self.f.body) if isinstance(s, ir.Alloc)
                      and isinstance(s.type, ir.ArrayType)}
            self._array_names = names | set(self.module.tables)
        return self._array_names

    def check_free(self, s: ir.Free, log: _Log) -> None:
        alloc = self.allocs.get(s.name)
        key = (self.f.name, s.name, s.pos.line, s.pos.column)
        if alloc is None:
            self.proofs.unproven.add(key)
            self.proofs.unproven_names.add(key[:2])
            return
        pending = log.touching(s.name)
        same_value = alloc.value == s.value
        if (pending or not same_value) and not s.checked:
            if pending:
                e = pending[0]
                why = f"{e.text} at line {e.pos.line} is not undone"
            else:
                why = (f"it was allocated as {expr_text(alloc.value)} but is freed as "
                       f"{expr_text(s.value)}")
            raise self.error(s.pos, f"ancilla {s.name!r} (allocated at line {alloc.pos.line}) "
                                    f"is not provably restored to {expr_text(s.value)}: {why}",
                             "undo the update (~routine, or the inverse statement); if a "
                             "relation the compiler cannot see restores it, write "
                             f"free({s.name}, {expr_text(s.value)}, checked=True), which the "
                             "machine checks at run time")
        if pending or not same_value or s.checked or alloc.checked or \
                not isinstance(alloc.value, ir.Const):
            self.proofs.unproven.add(key)
            self.proofs.unproven_names.add(key[:2])
        else:
            self.proofs.proven.add(key)
        log.forget(s.name)
        log.barrier(s.name, s.pos)

def _leaves(e: ir.Expr) -> list[ir.Expr]:
    """The variables and elements ``e`` reads, in order (an element's indices not
    entered): the Var and Index nodes of ``_subexpressions``, gathered by one recursive
    function (the generators nested as deep as the expression cost each leaf a step per
    level: a 10^4-deep sum took minutes)."""
    out: list[ir.Expr] = []
    _add_leaves(e, out)
    return out


def _add_leaves(e: ir.Expr | None, out: list[ir.Expr]) -> None:
    if e is None:
        return
    if isinstance(e, (ir.Var, ir.Index)):
        out.append(e)  # an element's indices are read, not the element
        return
    if isinstance(e, ir.Const):
        return
    if isinstance(e, (ir.BinOp, ir.Compare)):
        _add_leaves(e.left, out)
        _add_leaves(e.right, out)
        return
    for attr in ("left", "right", "operand"):
        _add_leaves(getattr(e, attr, None), out)
    for attr in ("values", "args"):
        for v in getattr(e, attr, ()) or ():
            _add_leaves(v, out)


def _subexpressions(e: ir.Expr | None) -> Iterator[ir.Expr]:
    if e is None:
        return
    yield e
    if isinstance(e, ir.Index):
        return  # index variables are read, not the element
    for attr in ("left", "right", "operand"):
        yield from _subexpressions(getattr(e, attr, None))
    for attr in ("values", "args"):
        for v in getattr(e, attr, ()) or ():
            yield from _subexpressions(v)
