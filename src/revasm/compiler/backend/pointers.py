"""Induction pointers: array addresses kept in registers across statements and iterations (-O2).

The plain lowering computes an element's address for every access: ``add`` the base,
add each index term, ``exch``, then the inverse of it all -- four to eight
instructions around each ``exch``, and an array walk ``x[i]`` pays them every
iteration.  At -O2 a *pointer* register holds ``base + sum(stride * v)`` for the
variable part of an address (the key: the array and the variables with their
strides) over a whole scope -- a function body or a ``for`` loop -- so an access is
``exch`` alone, or ``addi P c; exch; addi P -c`` for a constant offset ``c``.

The pointer stays equal to its address because the variables it reads change only by
constants inside its scope (``v += 3``, an ancilla allocated or freed with a constant,
a loop counter over constant bounds): each such update also adds ``stride * delta`` to
the pointer (:func:`const_step`, shared by the analysis and the lowering of updates).
A loop's own variable changes by the loop's step; its pointers are set up after the
counter starts and cleared before it is cleared.  A scope with a call keeps its
pointers in registers no callee names (``callee_registers.py``: callees are lowered
first), and a call changes only the arguments its callee's parameters change
(``param_ranges.call_writes``); with a callee whose registers are not known (recursion)
it keeps none.  A pointer is set up as the address would
be computed and cleared by the inverse of that code, which at the scope's end, with
the invariant, leaves it zero: every register but the variables' is zero between
scopes, as docs/abi.md says.  Pointers take variable registers the function leaves
free.  Addresses are integers, so no fixed-point operation changes: values and
gradients are bit for bit those of -O0.  A mixin of the function lowering
(``compiler/backend/function_lowering.py``).
"""
from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from ..ir import nodes as ir
from .code import Instr, inverse_code
from .layout import SP, VARIABLE_REGISTERS
from .lowering_state import FunctionLoweringState

#: The variable part of an address: (array, ((variable, stride), ...) sorted).
Key = tuple[str, tuple[tuple[str, int], ...]]

#: An access inside a loop counts this many times more than one outside it.
LOOP_WEIGHT = 8
#: A loop gets a pointer per constant offset only when it may run this many iterations.
MIN_TRIPS = 8
#: Outside loops, an offset read this many times gets a pointer of its own (its setup and
#: teardown cost about what two accesses' moves to the offset and back do).
MIN_STRAIGHT = 3


def affine(e: ir.Expr) -> dict[str, int] | None:
    """An Int expression as constant + sum(coefficient * variable) (key ``""``: the
    constant), or None when it is not one (an element, a division, a non-integer)."""
    if isinstance(e, ir.Const):
        return {"": int(e.value)} if e.value.denominator == 1 else None
    if isinstance(e, ir.Var):
        return {e.name: 1}
    if isinstance(e, ir.Unary) and e.op == "-":
        inner = affine(e.operand)
        return {k: -v for k, v in inner.items()} if inner is not None else None
    if isinstance(e, ir.BinOp) and e.op in ("+", "-"):
        a, b = affine(e.left), affine(e.right)
        if a is None or b is None:
            return None
        sign = 1 if e.op == "+" else -1
        out = dict(a)
        for k, v in b.items():
            out[k] = out.get(k, 0) + sign * v
        return out
    if isinstance(e, ir.BinOp) and e.op == "*":
        a, b = affine(e.left), affine(e.right)
        if a is None or b is None:
            return None
        for x, y in ((a, b), (b, a)):
            if set(x) <= {""}:
                return {k: v * x.get("", 0) for k, v in y.items()}
    return None


def flat_address(e: ir.Index, shape: tuple[int, ...]) -> tuple[Key, int] | None:
    """The key of an element's address and its constant offset, for affine indices."""
    terms: dict[str, int] = {}
    offset = 0
    stride = 1
    for index, extent in zip(reversed(e.indices), reversed(shape)):
        form = affine(index)
        if form is None:
            return None
        for name, coefficient in form.items():
            if name:
                terms[name] = terms.get(name, 0) + coefficient * stride
            else:
                offset += coefficient * stride
        stride *= extent
    key = (e.name, tuple(sorted((k, v) for k, v in terms.items() if v)))
    return key, offset


def const_step(s: ir.Stmt) -> tuple[str, int] | None:
    """(variable, delta) when ``s`` adds an integer constant to an Int scalar: ``v += c``,
    ``v -= c``, an ancilla allocated with ``c`` (+c) or freed with it (-c)."""
    if isinstance(s, ir.Update) and isinstance(s.target, ir.Var) and s.op in ("+", "-") \
            and isinstance(s.expr, ir.Const) and s.expr.is_int \
            and s.expr.value.denominator == 1:
        return s.target.name, int(s.expr.value) * (1 if s.op == "+" else -1)
    if isinstance(s, (ir.Alloc, ir.Free)) and s.type == ir.INT and \
            isinstance(s.value, ir.Const) and s.value.value.denominator == 1:
        return s.name, int(s.value.value) * (1 if isinstance(s, ir.Alloc) else -1)
    return None


#: Statements without statements inside them (``_nested`` has nothing to look up).
_SIMPLE = (ir.Update, ir.Swap, ir.Rot, ir.Show, ir.Call, ir.Alloc, ir.Free)


def _nested(s: ir.Stmt) -> list[list[ir.Stmt]]:
    if isinstance(s, _SIMPLE):
        return []
    return [getattr(s, a) for a in ("head", "body", "then", "orelse")
            if isinstance(getattr(s, a, None), list)]


def _exprs(s: ir.Stmt) -> list[ir.Expr]:
    if isinstance(s, ir.Update):  # the commonest statement: its fields, in order
        return [x for x in (s.target, s.expr) if isinstance(x, ir.Expr)]
    out: list[ir.Expr] = []
    for name in ir.field_names(type(s)):
        value = getattr(s, name)
        if isinstance(value, ir.Expr):
            out.append(value)
        elif isinstance(value, tuple):
            out += [v for v in value if isinstance(v, ir.Expr)]
    return out


def _elements(e: ir.Expr, out: list[ir.Index]) -> None:
    """Every array element in ``e``, each before those in its indices, appended to ``out``
    (one list, not a chain of generators: the whole body's walk, once per scope)."""
    t = type(e)
    if t is ir.Var or t is ir.Const:
        return
    if isinstance(e, (ir.BinOp, ir.Compare)):
        _elements(e.left, out)
        _elements(e.right, out)
        return
    if isinstance(e, ir.Index):
        out.append(e)
    for child in ir.children(e):
        _elements(child, out)


#: The variables a call may change (its arguments bound to parameters its callee changes).
CallWrites = Callable[[ir.Call], set[str]]


def _every_variable_argument(s: ir.Call) -> set[str]:
    return {a.name for a in s.args if isinstance(a, ir.Var)}


def written(body: list[ir.Stmt], call_writes: CallWrites = _every_variable_argument
            ) -> tuple[set[str], set[str], bool]:
    """(variables changed only by constant steps, variables changed otherwise, whether
    ``body`` makes a call) over ``body`` and everything nested in it; a call changes what
    ``call_writes`` says (by default every variable it is passed)."""
    stepped: set[str] = set()
    other: set[str] = set()
    calls = False
    for s in body:
        step = const_step(s)
        if step is not None:
            stepped.add(step[0])
        elif isinstance(s, ir.Update) and isinstance(s.target, ir.Var):
            other.add(s.target.name)
        elif isinstance(s, (ir.Alloc, ir.Free)):
            other.add(s.name)
        elif isinstance(s, (ir.Swap, ir.Rot)):
            other.update(x.name for x in (s.a, s.b) if isinstance(x, ir.Var))
        elif isinstance(s, ir.Call):
            calls = True
            other.update(call_writes(s))
        elif isinstance(s, ir.For):
            constant = all(isinstance(b, ir.Const) and b.value.denominator == 1
                           for b in (s.start, s.stop))
            (stepped if constant else other).add(s.var)
        for inner in _nested(s):
            a, b, c = written(inner, call_writes)
            stepped |= a
            other |= b
            calls = calls or c
    return stepped - other, other, calls


def accesses(body: list[ir.Stmt], weight: int = 1) -> list[tuple[ir.Index, int]]:
    """Every array element named in ``body`` (nested statements too), with a weight that
    grows with the loops around it."""
    out: list[tuple[ir.Index, int]] = []
    _accesses(body, weight, out)
    return out


def _accesses(body: list[ir.Stmt], weight: int, out: list[tuple[ir.Index, int]]) -> None:
    for s in body:
        found: list[ir.Index] = []
        for e in _exprs(s):
            _elements(e, found)
        out += [(e, weight) for e in found]
        inner_weight = weight * LOOP_WEIGHT if isinstance(s, (ir.For, ir.While)) else weight
        for inner in _nested(s):
            _accesses(inner, inner_weight, out)


def _controls(body: list[ir.Stmt]) -> bool:
    """Whether ``body`` holds a loop or an if (which -O2 gives a register of its own)."""
    return any(isinstance(s, (ir.For, ir.If)) or any(_controls(b) for b in _nested(s))
               for s in body)


class PointerLowering(FunctionLoweringState):
    """Pointer registers: chosen per scope, used by ``places``, kept by updates."""

    #: (key, constant offset) -> the register holding that address
    pointers: dict[tuple[Key, int], int]
    #: registers taken for the rest of the function's lowering (pointers, loop bounds)
    reserved: set[int]
    #: id of an element -> (the element, its ``flat_address``): see ``address_key``
    address_keys: dict[int, tuple[ir.Index, tuple[Key, int] | None]]

    def address_key(self, e: ir.Index) -> tuple[Key, int] | None:
        """``flat_address`` of ``e`` in this function (None for no array or an index that
        is not affine), worked out once per element: the scope around it weighs it and
        each lowering of it looks its pointer up (two walks of its indices per access were
        a tenth of an array program's lowering).  The entry keeps ``e`` alive, so that its
        id names no other element."""
        entry = self.address_keys.get(id(e))
        if entry is not None and entry[0] is e:
            return entry[1]
        shape = self.shape_of(e.name)
        found = flat_address(e, shape) if shape is not None else None
        self.address_keys[id(e)] = (e, found)
        return found

    def spare_registers(self) -> list[int]:
        """Variable registers this function leaves free: no variable, constant, pointer."""
        limit = self.p.max_registers
        available = VARIABLE_REGISTERS[:limit] if limit else VARIABLE_REGISTERS
        taken = set(self.lay.registers) | set(self.pool.values()) | self.reserved
        return [r for r in available if r not in taken]

    def shape_of(self, name: str) -> tuple[int, ...] | None:
        if name in self.p.module.tables:
            return self.p.module.tables[name].type.shape
        home = self.lay.arrays.get(name)
        return home.type.shape if home is not None else None

    def pointer_scope(self, body: list[ir.Stmt], loop_var: str | None,
                      build: Callable[[], list[Instr]]) -> list[Instr]:
        """``build()``'s code with the pointers worth keeping over ``body`` set up before
        it and cleared after it (``loop_var``: the scope is that loop's)."""
        if self.p.level < 2 or not (self.lay.arrays or self.p.module.tables):
            return build()  # no array to point into: nothing to weigh (a long program's
            # statements were each looked at by every scope around them)
        stepped, other, calls = written(body)
        blocked: frozenset[int] = frozenset()
        if calls:
            # across calls (callee_registers.py): only registers no callee names, and a
            # call changes only the arguments its callee's parameters change
            known = self.p.registers_of_calls(body)
            if known is None:
                return build()
            blocked = known
            stepped, other, calls = written(body, self.p.call_writes)
        valid = (stepped | {loop_var}) - {None} if loop_var is not None else set(stepped)
        if loop_var is not None and loop_var in other:
            return build()
        weights: dict[Key, int] = {}
        at: dict[Key, dict[int, int]] = {}  # key -> constant offset -> its weight
        live = {k for k, _ in self.pointers}
        # key -> (whether a pointer may hold it, whether its base register serves it),
        # worked out once per key rather than once per access
        verdicts: dict[Key, tuple[bool, bool]] = {}
        for e, weight in accesses(body):
            found = self.address_key(e)
            if found is None:
                continue
            key, offset = found
            verdict = verdicts.get(key)
            if verdict is None:
                names = {name for name, _ in key[1]}
                verdict = verdicts[key] = (
                    key not in live and names <= (valid | self._unwritten(names, stepped, other)),
                    not names and self._base_register(key[0]) is not None)
            usable, based = verdict
            if not usable:
                continue
            counts = at.setdefault(key, {})
            counts[offset] = counts.get(offset, 0) + weight
            if based:
                continue  # the base register itself serves (``places``), at offset 0
            weights[key] = weights.get(key, 0) + weight
        chosen = sorted((k for k, w in weights.items() if w >= 2), key=lambda k: -weights[k])
        registers = [r for r in self.spare_registers() if r not in blocked]
        if _controls(body):  # one register stays for a loop's bounds or an if's condition
            registers = registers[:-1]
        # each key's pointer sits at its most used offset; in a loop, every other offset its
        # body reads gets a pointer of its own while registers last (a step per iteration
        # instead of an addi before and after each access)
        wanted: list[tuple[Key, int]] = []
        extra: list[tuple[Key, int]] = []
        for key in chosen:
            offsets = sorted(at[key], key=lambda o: (-at[key][o], o))
            wanted.append((key, offsets[0]))
            if loop_var is not None and self._long_loop(loop_var):
                extra += [(key, o) for o in offsets[1:]]
            elif loop_var is None:
                extra += [(key, o) for o in offsets[1:] if at[key][o] >= MIN_STRAIGHT]
        # outside loops, a constant element of a parameter array read often enough gets a
        # pointer too (its base register serves offset 0)
        if loop_var is None:
            for key, counts in at.items():
                if not key[1] and key not in weights and key not in live:
                    extra += [(key, o) for o, n in counts.items() if o and n >= MIN_STRAIGHT]
        extra.sort(key=lambda entry: -at[entry[0]][entry[1]])
        wanted += extra
        setup: list[Instr] = []
        made: list[tuple[tuple[Key, int], int]] = []
        for (key, offset), register in zip(wanted, registers):
            setup += self._pointer_setup(key, register)
            if offset:
                setup.append(self.i("ADDI", register, str(offset), pos=self.f.pos,
                                    note=f"pointer into {key[0]}, at {offset:+d}"))
            made.append(((key, offset), register))
            self.pointers[(key, offset)] = register
            self.reserved.add(register)
        try:
            code = build()
        finally:
            for entry, register in made:
                del self.pointers[entry]
                self.reserved.discard(register)
        return setup + code + inverse_code(setup)

    def _long_loop(self, loop_var: str) -> bool:
        """Whether a loop may run ``MIN_TRIPS`` iterations or more (its variable's range,
        when known): below that, an extra pointer's setup and teardown at each entry cost
        more than the iterations save."""
        known = self.ranges.get(loop_var)
        return known is None or known[1] - known[0] + 1 >= MIN_TRIPS

    def _unwritten(self, names: set[str], stepped: set[str], other: set[str]) -> set[str]:
        """Those of ``names`` that the scope's body never writes (parameters, outer
        variables): neither ``stepped`` nor ``other`` (``written(body)``, computed once per
        scope -- once per access made compile time quadratic in the body's length)."""
        return {n for n in names if n not in stepped and n not in other
                and n in self.lay.scalars}

    def _base_register(self, name: str) -> int | None:
        home = self.lay.arrays.get(name)
        return home.register if home is not None else None

    def _pointer_setup(self, key: Key, register: int) -> list[Instr]:
        """``register += base + sum(stride * variable)``: the pointer's value, from zero."""
        name, terms = key
        pos = self.f.pos
        note = f"pointer into {name}"
        code, terms = self._shifted_term(register, terms, note)
        if name in self.p.module.tables:
            code.append(self.i("LI", register, f"t_{name}.0", pos=pos, note=note))
        else:
            home = self.lay.arrays[name]
            if home.register is not None:
                code.append(self.i("ADD", register, home.register, pos=pos, note=note))
            else:
                code.append(self.i("ADD", register, SP, pos=pos, note=note))
                if home.frame_offset:
                    code.append(self.i("ADDI", register, str(home.frame_offset), pos=pos))
        for variable, stride in terms:
            term: ir.Expr = ir.Var(pos, name=variable)
            if stride != 1:
                term = ir.BinOp(pos, op="*", left=term,
                                right=ir.Const(pos, value=Fraction(stride), is_int=True))
            code += self._accumulated(register, term)
        return code

    def _shifted_term(self, register: int, terms: tuple[tuple[str, int], ...],
                      note: str) -> tuple[list[Instr], tuple[tuple[str, int], ...]]:
        """The first term whose stride is 2^s or 2^s + 1 (s >= 1) of a variable in a
        register, put into the still zero pointer by one shift (``sllx P v s``: P ^= v <<
        s, the same word as 2^s additions) and an ``add`` for the + 1, and the other
        terms: the GMM's ``x[i, 0]`` costs ``sllx; add base`` instead of three ``add``."""
        for at, (variable, stride) in enumerate(terms):
            home = self.lay.scalars.get(variable)
            if home is None or home.register is None or stride < 2:
                continue
            shift = (stride - (stride & 1)).bit_length() - 1
            if (1 << shift) + (stride & 1) != stride:
                continue
            code = [self.i("SLLX", register, home.register, str(shift), pos=self.f.pos,
                           note=note)]
            if stride & 1:
                code.append(self.i("ADD", register, home.register, pos=self.f.pos))
            return code, terms[:at] + terms[at + 1:]
        return [], terms

    def _accumulated(self, register: int, term: ir.Expr) -> list[Instr]:
        """``register += term`` (an Int), its temporaries cleared again."""
        return self.complete(lambda: self.accumulate(register, 1, term, ir.INT))

    def pointer_of(self, e: ir.Index) -> tuple[int, int] | None:
        """(register, constant offset) of a live pointer for ``e``'s address: the pointer
        at ``e``'s own offset, else its key's main pointer (the first made)."""
        if not self.pointers:
            return None
        found = self.address_key(e)
        if found is None:
            return None
        key, offset = found
        register = self.pointers.get((key, offset))
        if register is not None:
            return register, 0
        for (k, at), register in self.pointers.items():
            if k == key:
                return register, offset - at
        return None

    def pointer_steps(self, s: ir.Stmt) -> list[Instr]:
        """The ADDIs that keep every live pointer equal to its address when ``s`` adds a
        constant to a variable the pointer reads."""
        if not self.pointers:
            return []
        step = const_step(s)
        if step is None:
            return []
        variable, delta = step
        code = []
        for ((name, terms), _), register in self.pointers.items():
            for term, stride in terms:
                if term == variable and stride * delta:
                    code.append(self.i("ADDI", register, str(stride * delta), pos=s.pos,
                                       note=f"pointer into {name}"))
        return code
