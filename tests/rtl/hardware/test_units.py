"""One test group per RTL unit: decoder, ALU templates, multiply/divide, function unit, tape."""
from __future__ import annotations

import random

import pytest

pytest.importorskip("amaranth", reason="the RTL needs the 'rtl' extra (amaranth)")

#: The RTL tests run with every warning an error (Amaranth deprecations, and
#: elaboratables created but never used, must not slip in)
WARNINGS_ARE_ERRORS = pytest.mark.filterwarnings("error")
pytestmark = WARNINGS_ARE_ERRORS

from amaranth.sim import Simulator  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from revasm.isa.codec import IllegalInstruction, decode, encode  # noqa: E402
from revasm.isa.elementary import TABLES  # noqa: E402
from revasm.isa.fixed_point import WordFormat  # noqa: E402
from revasm.isa.table import INSTRUCTIONS  # noqa: E402
from revasm.isa.vocabulary import vocabulary  # noqa: E402
from revasm.rtl.hardware.alu import Alu  # noqa: E402
from revasm.rtl.hardware.decoder import Decoder  # noqa: E402
from revasm.rtl.hardware.function_unit import IMPLEMENTED, FunctionUnit, cordic_schedule  # noqa: E402
from revasm.rtl.hardware.memory import Tape  # noqa: E402
from revasm.rtl.hardware.muldiv import OP_DIV, OP_MUL, MulDiv  # noqa: E402
from revasm.rtl.hardware.params import CoreParams  # noqa: E402
from revasm.rtl.hardware.semantics import FUNCTION_OPS, MULDIV_OPS, TemplateError, evaluate  # noqa: E402


def _simulate(dut, testbench, *, clock: bool = True) -> None:
    sim = Simulator(dut)
    if clock:
        sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()


def _words(width: int, rng: random.Random, count: int) -> list[int]:
    fmt = WordFormat(width)
    special = [0, 1, fmt.mask, fmt.one, fmt.wrap(-fmt.one), fmt.wrap(fmt.min_signed),
               fmt.max_signed, 3 * fmt.one // 2, fmt.wrap(-40)]
    out = list(special)
    while len(out) < count:
        kind = rng.randrange(3)
        if kind == 0:
            out.append(rng.randrange(1 << width))
        elif kind == 1:
            out.append(fmt.wrap(rng.randint(-8 * fmt.one, 8 * fmt.one)))
        else:
            out.append(fmt.wrap(rng.randint(-40, 40)))
    return out


# --- parameters -----------------------------------------------------------------------

def test_parameters() -> None:
    assert CoreParams(gradient=True).gradient
    from revasm.rtl.hardware.alu import max_calls
    assert max_calls(32, 34) == 1  # a value template calls a unit at most once
    with pytest.raises(ValueError):
        CoreParams(width=48)
    with pytest.raises(ValueError):
        CoreParams(memory_words=1000)


# --- decoder ---------------------------------------------------------------------------

def test_decoder_matches_the_codec() -> None:
    rng = random.Random(7)
    words = []
    for ins in INSTRUCTIONS:
        for _ in range(3):
            ops = {}
            for f in ins.fields:
                ops[f.name] = rng.randint(f.low, f.high)
            words.append(encode(ins, ops))
        words.append(encode(ins, {f.name: 0 for f in ins.fields}))
    words += [rng.randrange(1 << 32) for _ in range(150)]
    words += [w | 1 << rng.randrange(32) for w in words[:60]]  # stray bits
    dut = Decoder()

    async def testbench(ctx) -> None:
        for word in words:
            ctx.set(dut.word, word)
            ctx.set(dut.code, 1)
            try:
                ins, ops = decode(word)
            except IllegalInstruction:
                assert not ctx.get(dut.valid), hex(word)
                continue
            assert ctx.get(dut.valid), hex(word)
            assert ctx.get(dut.index) == INSTRUCTIONS.index(ins)
            for name, value in ops.items():
                assert ctx.get(getattr(dut, name)) == value, (ins.mnemonic, name)
            bad = any(ops.get(n) == 0 for n in ins.writes) or any(
                ops[x] == ops[y] for x, y in ins.distinct)
            assert ctx.get(dut.legal) == (not bad), (ins.mnemonic, ops)
            ctx.set(dut.code, 0)
            assert not ctx.get(dut.legal)

    _simulate(dut, testbench, clock=False)


# --- ALU (the table's templates) ----------------------------------------------------------

@pytest.mark.parametrize("width", [32, 64])
def test_alu_runs_the_templates(width: int) -> None:
    """Every non-unit data entry, both directions, against the template run in Python."""
    fmt = WordFormat(width)
    names = vocabulary(fmt)
    rng = random.Random(width)
    dut = Alu(width, width + 2)
    entries = [(i, ins) for i, ins in enumerate(INSTRUCTIONS)
               if ins.kind in ("data", "branch", "swapbr", "rbra")
               and not any(u in ins.forward for u in ("fmul", "fdiv", "fn_", "rot(", "emit",
                                                      "show", "addr"))]
    assert len(entries) > 30

    async def testbench(ctx) -> None:
        for index, ins in entries:
            for _ in range(6):
                regs = {n: rng.choice(_words(width, rng, 12)) for n in "abc"}
                ops = {f.name: rng.randint(max(f.low, -5), min(f.high, 40))
                       if f.name == "off" else rng.randint(f.low, f.high) for f in ins.fields}
                ops.setdefault("amt", 0)
                br = rng.choice([0, 0, 3, -7])
                for backward in (0, 1):
                    R = [0] * 32
                    numbers = {"a": 1, "b": 2, "c": 3}
                    for n, r in numbers.items():
                        R[r] = regs[n]
                    values = {**numbers, **{k: v for k, v in ops.items() if k not in "abc"}}
                    if "imm" in values:
                        values["imm"] &= fmt.mask
                    template = ins.backward if backward else ins.forward
                    env = dict(names, R=R, BR=br, DIR=-1 if backward else 1)
                    exec(template.format(**values), env)
                    for n in numbers:
                        ctx.set(getattr(dut, f"r{n}"), regs[n])
                    ctx.set(dut.index, index)
                    ctx.set(dut.backward, backward)
                    for f in ins.fields:
                        if f.name not in "abc":
                            ctx.set(getattr(dut, f.name), ops[f.name])
                    ctx.set(dut.br, br)
                    got_a = ctx.get(dut.wa_data) if ctx.get(dut.wa_en) else regs["a"]
                    assert got_a == env["R"][1], (ins.mnemonic, backward, regs, ops)
                    if ctx.get(dut.wb_en):
                        assert ctx.get(dut.wb_data) == env["R"][2]
                    assert ctx.get(dut.br_out) == env["BR"], (ins.mnemonic, backward)
                    assert (-1 if ctx.get(dut.backward_out) else 1) == env["DIR"]

    _simulate(dut, testbench, clock=False)


def _constant(value):
    return lambda *_: value


@pytest.mark.parametrize("width", [32, 64])
def test_alu_counts_the_templates_overflow_events(width: int) -> None:
    """Every entry that counts overflow events, both directions, with a free unit result
    and unit overflow bit: the ALU's event and its sign against the template in Python."""
    fmt = WordFormat(width)
    rng = random.Random(width + 7)
    dut = Alu(width, width + 2)
    entries = [(i, ins) for i, ins in enumerate(INSTRUCTIONS) if "OV[" in ins.forward]
    assert len(entries) > 20
    seen = {-1: 0, 0: 0, 1: 0}

    async def testbench(ctx) -> None:
        for index, ins in entries:
            for trial in range(8):
                regs = {n: rng.choice(_words(width, rng, 12)) for n in "abc"}
                r0, r1 = rng.choice(_words(width, rng, 12)), rng.choice(_words(width, rng, 12))
                if trial < 2:  # a term at an end of the range (ovf_sat)
                    r0 = rng.choice([fmt.mask >> 1, 1 << (width - 1)])
                unit_bit = trial % 2
                names = dict(vocabulary(fmt))
                names.update({op: _constant(r0) for op in FUNCTION_OPS + MULDIV_OPS})
                names.update({op: _constant((r0, r1)) for op in ("rot", "irot")})
                names.update({f"ovf_{op}": _constant(unit_bit)
                              for op in ("mul", "div", "rot", "irot")})
                names["overflow"] = int
                for backward in (0, 1):
                    R = [0] * 32
                    R[1], R[2], R[3] = regs["a"], regs["b"], regs["c"]
                    env = dict(names, R=R, OV=[0])
                    template = ins.backward if backward else ins.forward
                    exec(template.format(a=1, b=2, c=3), env)
                    want = fmt.signed(env["OV"][0])
                    for n in "abc":
                        ctx.set(getattr(dut, f"r{n}"), regs[n])
                    ctx.set(dut.res0_0, r0)
                    ctx.set(dut.res0_1, r1)
                    ctx.set(dut.ovf0, unit_bit)
                    ctx.set(dut.index, index)
                    ctx.set(dut.backward, backward)
                    assert ctx.get(dut.ov_en)
                    got = ctx.get(dut.ov_event) * (-1 if ctx.get(dut.ov_down) else 1)
                    assert got == want, (ins.mnemonic, backward, regs, r0, r1, unit_bit)
                    seen[want] += 1

    _simulate(dut, testbench, clock=False)
    assert min(seen.values()) >= 20


def test_translator_refuses_unknown_constructs() -> None:
    from amaranth.hdl import Const

    from revasm.rtl.hardware.semantics import Inputs
    inputs = Inputs(32, {"A": Const(0, 32), "B": Const(0, 32), "C": Const(0, 32)}, {},
                    Const(0, 34), Const(1, 2), Const(0, 32), Const(0, 32),
                    (Const(0, 32), Const(0, 32)))
    with pytest.raises(TemplateError):
        evaluate("R[{a}] = mystery(R[{b}])", inputs)
    with pytest.raises(TemplateError):
        evaluate("while True: pass", inputs)


def test_the_translator_records_how_it_built_every_value_of_every_template() -> None:
    """The ALU takes the templates' expressions apart through ``semantics.Nodes`` (not
    Amaranth's private AST): every value an effect holds is an input, a signal or constant,
    or has a node -- and that node, built again from its own operands, gives the very
    expression back."""
    from amaranth.hdl import Const, Signal, signed

    from revasm.rtl.hardware.semantics import Inputs, direction_value
    words = {name: Signal(32, name=name) for name in ("a", "b", "c", "imm", "mem", "tape")}
    inputs = Inputs(32, {"A": words["a"], "B": words["b"], "C": words["c"]},
                    {"IMM": words["imm"], "AMT": Signal(6), "K": Signal(2),
                     "OFF": Signal(signed(26))},
                    Signal(signed(34)), direction_value(Signal()), words["mem"], words["tape"],
                    ((Signal(32), Signal(32)),), shifter=Signal(32), adder=Signal(signed(34)),
                    unit_overflows=(Signal(),))
    nodes, checked = inputs.nodes, 0

    def walk(value, where):
        nonlocal checked
        node = nodes.node(value)
        if node is None:
            assert isinstance(value, (Const, Signal)) or value is inputs.direction, \
                f"{where}: {value!r} was built outside semantics.Nodes"
            return
        assert repr(nodes.remake(value, node.operands)) == repr(value), where
        checked += 1
        for operand in node.operands:
            walk(operand, where)

    for ins in INSTRUCTIONS:
        for template in (ins.forward, ins.backward):
            eff = evaluate(template, inputs)
            values = [*eff.writes.values(), eff.mem_addr, eff.mem_write, eff.br, eff.direction,
                      eff.show, eff.emit, eff.ov_event, *(eff.shift or ()),
                      *(eff.add[:2] if eff.add else ()),
                      *(arg for _, args in eff.calls for arg in args)]
            for value in values:
                if value is not None:
                    walk(value, f"{ins.mnemonic}: {template}")
    assert checked > 1000


# --- gradient micro-programs (isa/timing/microcode.py) ------------------------------------------

def _run_micro(ops, names, fmt, regs, R, G, GM):
    """A Python model of the gradient unit: micro-operations in order, each reading the
    banks as the previous ones left them (what the RTL does, one op per READ/EXEC)."""
    temps, units, maddr = {}, [0, 0], [None]

    def read(o):
        return {"ZERO": lambda: 0, "ONE": lambda: fmt.one, "R": lambda: R[regs[o.reg]],
                "G": lambda: G[regs[o.reg]], "GM": lambda: GM[maddr[0]],
                "U0": lambda: units[0], "U1": lambda: units[1],
                "T": lambda: temps[o.reg]}[o.source]()

    for op in ops:
        args = [read(o) for o in op.reads()]
        if op.op == "CALL":
            result = names[op.unit](*args)
            units[:] = list(result) if isinstance(result, tuple) else [result, units[1]]
            continue
        if op.op == "ADDR":
            maddr[0] = args[0]
            continue
        # the lambdas are called at once, in this iteration: no late binding of args (B023)
        value = {"ADD": lambda: (args[0] + args[1]) & fmt.mask,  # noqa: B023
                 "SUB": lambda: (args[0] - args[1]) & fmt.mask,  # noqa: B023
                 "SIGN": lambda: names["fsign"](args[0])}[op.op]()  # noqa: B023
        if op.dst.source == "G":
            G[regs[op.dst.reg]] = value
        elif op.dst.source == "GM":
            GM[maddr[0]] = value
        else:
            temps[op.dst.reg] = value


@pytest.mark.parametrize("width", [32, 64])
def test_micro_programs_are_the_gradient_templates(width: int) -> None:
    """Every entry, both directions, a few states (two operands naming one register too):
    the value template plus the micro-program, in the step's order, change R, MEM, G and
    GM exactly as the table's gradient-mode template run in Python."""
    from revasm.isa.adjoint import mode_template
    from revasm.isa.timing.microcode import step
    fmt = WordFormat(width)
    names = vocabulary(fmt)
    rng = random.Random(width + 3)
    pool = _words(width, rng, 24) + [fmt.from_real(rng.uniform(0.3, 3)) for _ in range(24)]
    compared = 0
    for index, ins in enumerate(INSTRUCTIONS):
        if ins.kind != "data" or ins.mnemonic in ("SHOW", "EMIT"):
            continue
        layouts = [{"a": 1, "b": 2, "c": 3}]
        if ("b", "c") not in ins.distinct and ("c", "b") not in ins.distinct:
            layouts.append({"a": 1, "b": 2, "c": 2})
        for backward in (False, True):
            s = step(index, backward)
            for regs in layouts:
                for _ in range(4):
                    ops = {f.name: rng.randint(max(f.low, -50), min(f.high, 50))
                           for f in ins.fields if f.name not in "abc"}
                    fields = {**regs, **ops}
                    R = [0] + [rng.choice(pool) for _ in range(4)]
                    G = [0] + [rng.choice(pool) for _ in range(4)]
                    if ins.mnemonic == "EXCH":  # R[b] is the address: cell 5
                        R[regs["b"]] = 5
                    MEM = {5: rng.choice(pool)}
                    GM = {5: rng.choice(pool)}
                    env = dict(names, R=list(R), G=list(G), MEM=dict(MEM), GM=dict(GM),
                               BR=0, DIR=-1 if backward else 1, addr=lambda word: word,
                               OV=[0], overflow=lambda flag: flag)
                    template = mode_template(ins, -1 if backward else 1, gradient=True)
                    try:
                        exec(template.format(**fields), env)
                    except ArithmeticError:
                        continue
                    mine = dict(names, R=list(R), MEM=dict(MEM), BR=0,
                                DIR=-1 if backward else 1, addr=lambda word: word,
                                OV=[0], overflow=lambda flag: flag)
                    G2, GM2 = list(G), dict(GM)
                    value = (ins.backward if backward else ins.forward).format(**fields)
                    number = {k.upper(): v for k, v in regs.items()}
                    if s.value_first:
                        exec(value, mine)
                    _run_micro(s.ops, names, fmt, number, mine["R"], G2, GM2)
                    if not s.value_first:
                        exec(value, mine)
                    assert (mine["R"], mine["MEM"], G2, GM2) == (env["R"], env["MEM"], env["G"],
                                                                  env["GM"]), \
                        (ins.mnemonic, backward, regs, [hex(r) for r in R], [hex(g) for g in G])
                    compared += 1
    assert compared > 500


def test_every_gradient_step_has_a_micro_program() -> None:
    """No entry falls back to 'unimplemented'; the families with an adjoint have a program."""
    from revasm.rtl.hardware.gradient_unit import MicroRom
    rom = MicroRom()
    assert all(s is not None for s in rom.steps.values())
    with_program = {INSTRUCTIONS[i].mnemonic for (i, _), s in rom.steps.items() if s.ops}
    assert {"ADD", "SUB", "NEG", "SWAP", "EXCH", "ADDMUL", "ADDDIV", "ROT", "ADDSIN",
            "ADDPOW", "ADDATAN2"} <= with_program
    assert "XOR" not in with_program  # bitwise: no gradient
    assert rom.width() <= 16  # two block RAMs (512 x 8) at W = 32
    assert max(len(s.ops) for s in rom.steps.values()) == 16


# --- multiply / divide ------------------------------------------------------------------------

@pytest.mark.parametrize("unit", ["muldiv", "function-unit"])
@pytest.mark.parametrize("width", [32, 64])
def test_muldiv_is_the_vocabulary(width: int, unit: str) -> None:
    """fmul/fdiv and their overflow bits, on the multiply/divide unit and on the function
    unit (which does their work in a core that has it)."""
    fmt = WordFormat(width)
    names = vocabulary(fmt)
    rng = random.Random(width + 1)
    xs = _words(width, rng, 30)
    cases = [(op, x, rng.choice(xs)) for op in (OP_MUL, OP_DIV) for x in xs] + [(OP_DIV, 5, 0)]
    cases += [(OP_MUL, fmt.from_real("50000"), fmt.from_real("50000")),
              (OP_DIV, fmt.wrap(fmt.min_signed), fmt.wrap(-fmt.one)),
              (OP_DIV, fmt.wrap(fmt.min_signed), fmt.one), (OP_DIV, fmt.one, 1)]
    # products at the ends of the range: -2**(W-1) fits, +2**(W-1) does not
    cases += [(OP_MUL, fmt.wrap(fmt.min_signed), fmt.one),
              (OP_MUL, fmt.wrap(fmt.min_signed), fmt.wrap(-fmt.one)),
              (OP_MUL, fmt.max_signed, fmt.one), (OP_MUL, 0, fmt.wrap(-fmt.one))]
    dut = MulDiv(width) if unit == "muldiv" else FunctionUnit(width)
    result = dut.result if unit == "muldiv" else dut.r0
    overflows = [0, 0]

    async def testbench(ctx) -> None:
        for op, x, y in cases:
            ctx.set(dut.op, op)
            if unit != "muldiv":
                ctx.set(dut.arith, 1)
            ctx.set(dut.x, x)
            ctx.set(dut.y, y)
            ctx.set(dut.start, 1)
            await ctx.tick()
            ctx.set(dut.start, 0)
            await ctx.tick().until(dut.done)
            if op == OP_DIV and y == 0:
                assert ctx.get(dut.fault)
                continue
            want = names["fmul" if op == OP_MUL else "fdiv"](x, y)
            assert not ctx.get(dut.fault)
            assert ctx.get(result) == want, (op, fmt.signed(x), fmt.signed(y))
            fits = names["ovf_mul" if op == OP_MUL else "ovf_div"](x, y)
            assert ctx.get(dut.overflow) == fits, (op, fmt.signed(x), fmt.signed(y))
            overflows[fits] += 1

    _simulate(dut, testbench)
    assert min(overflows) >= 5  # both outcomes seen


# --- function unit --------------------------------------------------------------------------------

def test_every_function_unit_operation_is_implemented() -> None:
    assert IMPLEMENTED == frozenset(FUNCTION_OPS)


@pytest.mark.parametrize("width", [32, 64])
def test_cordic_schedule_is_the_tables(width: int) -> None:
    """The unit forms each CORDIC iteration's shift and angle (a short table, then powers of
    two): every one equals isa/elementary's tables."""
    t = TABLES[width]
    for hyperbolic, table in ((False, t.circular), (True, t.hyperbolic)):
        for k, (shift, _, angle) in enumerate(table):
            assert cordic_schedule(t, k, hyperbolic) == (shift, angle), (hyperbolic, k)


@pytest.mark.parametrize("width", [32, 64])
def test_function_unit_is_bit_exact(width: int) -> None:
    """Every operation against isa/elementary and isa/rotation (through the vocabulary)."""
    fmt = WordFormat(width)
    rng = random.Random(width + 2)
    pool = _words(width, rng, 40)
    cases = [(op, rng.choice(pool), rng.choice(pool), rng.choice(pool))
             for op in FUNCTION_OPS for _ in range(9)]
    cases += [("fn_log", 0, 0, 0), ("fn_sqrt", fmt.wrap(-1), 0, 0), ("fn_pow", 0, fmt.wrap(-3), 0),
              ("fn_pow", fmt.wrap(-fmt.one), fmt.one, 0), ("fn_tanh", 0, 0, 0), ("fn_exp", 0, 0, 0)]
    big, angle = (fmt.mask >> 1) * 7 // 8, fmt.from_real("0.7")
    cases += [("rot", big, big, angle), ("irot", big, big, angle),  # a shear wraps
              ("rot", 1 << (width - 1), 0, fmt.from_real("3")),  # the negation wraps
              ("irot", 0, 1 << (width - 1), fmt.from_real("3")),  # (irot: last, y then x)
              ("rot", 0, 1 << (width - 1), fmt.wrap(fmt.from_real("-3")))]
    # the saturations before the CORDIC: exp's operand and pow's y ln x at +-(W + 2)
    edge = (width + 2) * fmt.one
    cases += [("fn_exp", e, 0, 0) for e in (edge, edge - 1, fmt.wrap(-edge), fmt.wrap(1 - edge))]
    # sigmoid: one or zero from |x| = 2 (F + 4) on; below it, both signs, exp's routine and
    # a division (the numerator e**r, or 4**-k e**-r for x < 0, k up to 29 / 52)
    limit = (width + 8) * fmt.one
    cases += [("fn_sigmoid", fmt.wrap(s * e), 0, 0) for s in (1, -1)
              for e in (limit, limit - 1, fmt.one // 3, fmt.from_real("2.5"), 17 * fmt.one)]
    cases += [("fn_sigmoid", v, 0, 0) for v in (0, 1, fmt.mask, 1 << (width - 1))]
    cases += [("fn_pow", fmt.from_real("100"), fmt.from_real("50"), 0),
              ("fn_pow", fmt.from_real("0.01"), fmt.from_real("100"), 0)]
    # tan next to its pole at pi/2, both signs: the quotient saturates
    pole = fmt.from_real("1.5707963267948966")
    cases += [("fn_tan", fmt.wrap(sign * (pole + d)), 0, 0) for sign in (1, -1) for d in (-1, 0, 1)]
    checked = _run_function_unit(width, cases)
    assert checked["fault"] >= 4 and checked["value"] > 100 and checked["wraps"] >= 3


def _word_strategy(width: int):
    """Words hypothesis draws: any word, small fixed-point reals, or tiny integers."""
    fmt = WordFormat(width)
    return st.one_of(st.integers(0, fmt.mask),
                     st.integers(-8 * fmt.one, 8 * fmt.one).map(fmt.wrap),
                     st.integers(-40, 40).map(fmt.wrap))


@pytest.mark.parametrize("width", [32, 64])
def test_function_unit_agrees_with_the_oracle_on_drawn_operands(width: int) -> None:
    """The same law on operands hypothesis draws: a call of every operation per example."""
    word = _word_strategy(width)

    @settings(max_examples=4, deadline=None, derandomize=True)
    @given(st.tuples(*(st.tuples(word, word, word) for _ in FUNCTION_OPS)))
    def check(operands) -> None:
        _run_function_unit(width, [(op, *words) for op, words in zip(FUNCTION_OPS, operands)])

    check()


def _run_function_unit(width: int, cases: list[tuple[str, int, int, int]]) -> dict[str, int]:
    """Run each (op, x, y, z) on the unit and compare with isa/elementary and isa/rotation
    (through the vocabulary): results, faults and overflow; returns what was checked."""
    fmt = WordFormat(width)
    names = vocabulary(fmt)
    dut = FunctionUnit(width)
    checked = {"fault": 0, "value": 0, "wraps": 0}

    async def testbench(ctx) -> None:
        for op, x, y, z in cases:
            ctx.set(dut.op, FUNCTION_OPS.index(op))
            ctx.set(dut.x, x)
            ctx.set(dut.y, y)
            ctx.set(dut.z, z)
            ctx.set(dut.start, 1)
            await ctx.tick()
            ctx.set(dut.start, 0)
            await ctx.tick().until(dut.done)
            function = names[op]
            try:
                if op in ("rot", "irot"):
                    want = function(x, y, z)
                elif op in ("fn_atan2", "fn_pow"):
                    want = (function(x, y),)
                else:
                    want = (function(x),)
            except ArithmeticError:
                assert ctx.get(dut.fault), (op, x, y)
                checked["fault"] += 1
                continue
            assert not ctx.get(dut.fault), (op, x, y, z)
            got = (ctx.get(dut.r0), ctx.get(dut.r1))[:len(want)]
            assert got == tuple(want), (op, fmt.signed(x), fmt.signed(y), fmt.signed(z))
            wraps = names[f"ovf_{op}"](x, y, z) if op in ("rot", "irot") else 0
            assert ctx.get(dut.overflow) == wraps, (op, fmt.signed(x), fmt.signed(y),
                                                    fmt.signed(z))
            checked["wraps"] += wraps
            checked["value"] += 1

    _simulate(dut, testbench)
    return checked


# --- tape -----------------------------------------------------------------------------------------

def test_tape_is_a_bounded_stack() -> None:
    dut = Tape(32, 4)

    async def testbench(ctx) -> None:
        assert ctx.get(dut.empty)
        for value in (11, 22, 33, 44):
            ctx.set(dut.wdata, value)
            ctx.set(dut.push, 1)
            await ctx.tick()
        ctx.set(dut.push, 0)
        assert ctx.get(dut.full) and ctx.get(dut.count) == 4
        await ctx.tick()
        popped = []
        for _ in range(4):
            popped.append(ctx.get(dut.top))
            ctx.set(dut.pop, 1)
            await ctx.tick()
            ctx.set(dut.pop, 0)
            await ctx.tick()
        assert popped == [44, 33, 22, 11]
        assert ctx.get(dut.empty)

    _simulate(dut, testbench)
