"""THE instruction table: every instruction of the machine, declared once.

Base: PISA, the Pendulum ISA (Frank 1999, App. B) in the dialect of PendVM,
with Frank's semantics where PendVM departs from them (signed SLTIX, ORIX
with an immediate).  Extension: fixed-point arithmetic for differentiable
programs (register SWAP, multiply/divide accumulate, function accumulate,
exactly reversible Givens rotation, wide immediates for constant loading).

Machine state: registers R[0..31] (W-bit words, R[0] reads 0 and is never
written), memory MEM (W-bit words; the program image occupies the low
addresses), BR (branch register, a signed integer), DIR (+1 forward, -1
backward).  After every instruction: if BR == 0 then PC += DIR, else
PC += BR * DIR.  An instruction reached through BR != 0 must leave BR == 0
(the checked come-from rule); otherwise the machine faults.

Exactness (docs/isa.md, "Overflow events"): fixed-point words wrap mod 2^W, and every extension
instruction whose exact result does not fit its word counts one *overflow event* on
the architectural overflow counter ``OV`` (``OV[0]``, one W-bit word, read signed):
forward adds 1, backward (which recomputes the event from the state it restores)
takes the same 1 away, so forward then backward restores OV like every other word.
The ``overflow`` device sees each event first: with the strict switch on it faults
there, before the instruction writes anything.  PISA's integer ADD/SUB (and ADDI,
ADDIS, NEG) wrap by definition and count nothing.

Each entry's ``forward`` runs when DIR = +1 and ``backward`` when DIR = -1;
running the machine backward is "flip DIR, step, flip DIR", so for every
entry ``backward`` undoes ``forward``.  Branches therefore add their offset
going forward and subtract it going backward; the program counter moves by
BR * DIR, so the jump lands on the same address either way (PendVM keeps
BR * DIR in its register instead; SWAPBR shows both as the same value).
"""
from __future__ import annotations

from typing import Any

from .derivatives import (
    BINARY_DERIVATIVES,
    COPY_DERIVATIVE,
    PRODUCT_DERIVATIVE,
    QUOTIENT_DERIVATIVE,
    UNARY_DERIVATIVES,
    Derivative,
    GradientRules,
    accumulate_rules,
)
from .instruction import Instruction, make
from .primitives import primitive

#: Function-accumulate families; the position is the funct code (2i adds, 2i+1
#: subtracts), so append new functions at the end.  Each is the primitive ``fn_<name>``
#: of ``isa/primitives.py`` (its algorithm, faults, error bound and overflow predicate).
UNARY_FUNCTIONS = ("sin", "cos", "tan", "tanh", "exp", "log", "sqrt", "abs", "atan",
                   "sinh", "cosh", "sigmoid")
BINARY_FUNCTIONS = ("atan2", "pow")

for _arity, _family in ((1, UNARY_FUNCTIONS), (2, BINARY_FUNCTIONS)):
    for _name in _family:
        if primitive(f"fn_{_name}").arity != _arity:
            raise ValueError(f"fn_{_name} does not take {_arity} operand(s)")


def _overflow_of(call: str, operands: str) -> str:
    """The overflow test of a term ``call(operands)``: its row's predicate, applied to the
    same operands when it tests the call (``ovf_mul``), else to the term's word
    (``ovf_sat(_term)``); ``"0"`` for a primitive whose result always fits."""
    row = primitive(call)
    if row.overflow is None:
        return "0"
    if primitive(row.overflow).tests == call:
        return f"{row.overflow}({operands})"
    return f"{row.overflow}(_term)"

# --- templates -------------------------------------------------------------

def _accumulate(add: str, sub: str, fmt: str, add_op: int, sub_op: int, term: str,
                doc_term: str, energy: str, funct_add: int = 0,
                funct_sub: int = 0, distinct: tuple = (), extension: bool = False,
                derivative: Derivative | None = None, notes: str = "",
                term_overflow: str | None = None) -> list[Instruction]:
    """An ADD/SUB pair ``a += term`` / ``a -= term``, each the other's inverse.

    With ``derivative`` (the term's partials) the pair is differentiable and
    its gradient-mode templates are derived from it (``isa/adjoint.py``).
    With ``term_overflow`` (an expression over the operands and ``_term``, the
    term's word; ``"0"`` for a term that always fits) the pair counts overflow
    events (:func:`_counted`); without it, it wraps silently (PISA's ADD/SUB).
    """
    if term_overflow is None:
        plus_update = f"R[{{a}}] = (R[{{a}}] + {term}) & M"
        minus_update = f"R[{{a}}] = (R[{{a}}] - {term}) & M"
        plus, minus = (plus_update, minus_update), (minus_update, plus_update)
    else:
        plus, minus = _counted(term, term_overflow, "+"), _counted(term, term_overflow, "-")
    common = dict(energy_class=energy, writes=("a",), distinct=distinct,
                  extension=extension, differentiable=derivative is not None, notes=notes)
    no_rules = GradientRules()
    add_rules = accumulate_rules("+", derivative) if derivative else no_rules
    sub_rules = accumulate_rules("-", derivative) if derivative else no_rules
    return [
        make(add, fmt, add_op, funct=funct_add, forward=plus[0], backward=plus[1],
             inverse=sub, doc=f"a += {doc_term}", **_rules(add_rules), **common),
        make(sub, fmt, sub_op, funct=funct_sub, forward=minus[0], backward=minus[1],
             inverse=add, doc=f"a -= {doc_term}", **_rules(sub_rules), **common),
    ]


def _counted(term: str, term_overflow: str, op: str) -> tuple[str, str]:
    """Forward and backward templates of ``a op= term`` that count its overflow event.

    The event: the term itself does not fit (``term_overflow``) or the exact sum
    ``S(a) op S(term)`` leaves the signed range (``ovf_add``/``ovf_sub``).  Forward
    tests the state before the update and adds 1; backward first recomputes that
    state (``_before``), tests it the same way and takes the 1 away.  Both call
    the ``overflow`` device before writing, so a strict fault leaves no effect.
    """
    check = "ovf_add" if op == "+" else "ovf_sub"
    undo = "-" if op == "+" else "+"
    event = f"{check}(BEFORE, _term)"
    if term_overflow != "0":
        event = f"{term_overflow} | {event}"
    forward = (f"_term = {term}\n"
               f"OV[0] = (OV[0] + overflow({event.replace('BEFORE', 'R[{a}]')})) & M\n"
               f"R[{{a}}] = (R[{{a}}] {op} _term) & M")
    backward = (f"_term = {term}\n"
                f"_before = (R[{{a}}] {undo} _term) & M\n"
                f"OV[0] = (OV[0] - overflow({event.replace('BEFORE', '_before')})) & M\n"
                f"R[{{a}}] = _before")
    return forward, backward


def _rules(rules: GradientRules) -> dict[str, str]:
    return dict(adjoint=rules.adjoint, tangent=rules.tangent,
                adjoint_tangent=rules.adjoint_tangent)


def _on_banks(template: str) -> dict[str, str]:
    """A structural rule that acts alike on all three banks (NEG, SWAP, EXCH).

    ``template`` is written over ``V``/``VM`` (the value bank it mirrors) and
    becomes the adjoint on G/GM, the tangent on T/TM and the gradient
    tangent on TG/TGM.
    """
    def on(bank: str) -> str:
        return template.replace("VM[", f"{bank}M[").replace("V[", f"{bank}[")
    return dict(adjoint=on("G"), tangent=on("T"), adjoint_tangent=on("TG"))


# ROT (a, b) by angle c: (x', y') = R(c) (x, y).  Reverse mode from the output
# values and gradients: G[c] += G[y] x' - G[x] y', then (G[x], G[y]) = R(-c) G
# (irot).  Forward mode: T = R(c) T + T[c] (-y', x').  Second order: the
# derivative of both along v, with d/dc R(-c) g = (g'y, -g'x) for g' = R(-c) g.
_ROT_RULES = dict(
    adjoint="G[{c}] = (G[{c}] + fmul(G[{b}], R[{a}]) - fmul(G[{a}], R[{b}])) & M\n"
            "G[{a}], G[{b}] = irot(G[{a}], G[{b}], R[{c}])",
    tangent="T[{a}], T[{b}] = rot(T[{a}], T[{b}], R[{c}])\n"
            "T[{a}] = (T[{a}] - fmul(R[{b}], T[{c}])) & M\n"
            "T[{b}] = (T[{b}] + fmul(R[{a}], T[{c}])) & M",
    adjoint_tangent="_gx, _gy = irot(G[{a}], G[{b}], R[{c}])\n"
                    "TG[{c}] = (TG[{c}] + fmul(TG[{b}], R[{a}]) + fmul(G[{b}], T[{a}]) "
                    "- fmul(TG[{a}], R[{b}]) - fmul(G[{a}], T[{b}])) & M\n"
                    "TG[{a}], TG[{b}] = irot(TG[{a}], TG[{b}], R[{c}])\n"
                    "TG[{a}] = (TG[{a}] + fmul(_gy, T[{c}])) & M\n"
                    "TG[{b}] = (TG[{b}] - fmul(_gx, T[{c}])) & M",
)
def _rotation(apply: str, undo: str, op: str) -> str:
    """ROT/IROT's value template: ``apply`` the rotation, counting its overflow event.

    Forward (``op`` ``+``) tests the operands before rotating; backward (``-``)
    rotates back first and tests the state it restored, so each takes back
    exactly what the other counted.  ``ovf_rot``/``ovf_irot`` name the rotation
    whose shears they test (the one that ran forward).
    """
    test = primitive(apply if op == "+" else undo).overflow
    if op == "+":
        return (f"OV[0] = (OV[0] + overflow({test}(R[{{a}}], R[{{b}}], R[{{c}}]))) & M\n"
                f"R[{{a}}], R[{{b}}] = {apply}(R[{{a}}], R[{{b}}], R[{{c}}])")
    return (f"_x, _y = {apply}(R[{{a}}], R[{{b}}], R[{{c}}])\n"
            f"OV[0] = (OV[0] - overflow({test}(_x, _y, R[{{c}}]))) & M\n"
            "R[{a}], R[{b}] = _x, _y")


# IROT has no rules of its own: it runs ROT's gradient-mode step the other way
# (rules_from), so IROT forward is bit for bit ROT backward in every bank.


def _xor_into(name: str, fmt: str, opcode: int, term: str, doc_term: str, energy: str,
              distinct: tuple = (), notes: str = "") -> Instruction:
    """``a ^= term``: self-inverse as long as ``term`` does not read ``a``."""
    stmt = f"R[{{a}}] ^= {term}"
    return make(name, fmt, opcode, forward=stmt, backward=stmt, doc=f"a ^= {doc_term}",
                energy_class=energy, writes=("a",), distinct=distinct, notes=notes)


def _branch(name: str, fmt: str, opcode: int, condition: str, doc_condition: str,
            **kwargs: Any) -> Instruction:
    return make(name, fmt, opcode, kind="branch", condition=condition,
                forward=f"if {condition}: BR = BR + {{off}}",
                backward=f"if {condition}: BR = BR - {{off}}",
                doc=f"if {doc_condition}: BR += off", energy_class="branch", **kwargs)


AB = (("a", "b"),)
ABC = (("a", "b"), ("a", "c"))

# --- PISA -----------------------------------------------------------------

PISA: list[Instruction] = [
    *_accumulate("ADD", "SUB", "RR", 0x01, 0x02, "R[{b}]", "b", "alu",
                 distinct=AB, derivative=COPY_DERIVATIVE),
    make("ADDI", "RI", 0x03, forward="R[{a}] = (R[{a}] + {imm}) & M",
         backward="R[{a}] = (R[{a}] - {imm}) & M", doc="a += imm",
         energy_class="alu", writes=("a",), differentiable=True,
         notes="Adding a constant leaves every gradient as it is (empty adjoint)."),
    make("NEG", "R", 0x04, forward="R[{a}] = -R[{a}] & M", backward="R[{a}] = -R[{a}] & M",
         doc="a = -a", energy_class="alu", writes=("a",), differentiable=True,
         **_on_banks("V[{a}] = -V[{a}] & M")),
    _xor_into("XOR", "RR", 0x05, "R[{b}]", "b", "logic", AB),
    _xor_into("XORI", "RI", 0x06, "{imm}", "imm", "logic"),
    _xor_into("ANDX", "RRR", 0x07, "R[{b}] & R[{c}]", "b & c", "logic", ABC),
    _xor_into("ANDIX", "RRI", 0x08, "R[{b}] & {imm}", "b & imm", "logic", AB),
    _xor_into("ORX", "RRR", 0x09, "R[{b}] | R[{c}]", "b | c", "logic", ABC),
    _xor_into("ORIX", "RRI", 0x0A, "R[{b}] | {imm}", "b | imm", "logic", AB,
              notes="Frank's immediate form; PendVM reads a register here."),
    _xor_into("NORX", "RRR", 0x0B, "~(R[{b}] | R[{c}]) & M", "~(b | c)", "logic", ABC),
    _xor_into("SLTX", "RRR", 0x0C, "slt(R[{b}], R[{c}])", "(b < c) signed", "logic", ABC),
    _xor_into("SLTIX", "RRI", 0x0D, "slt(R[{b}], {imm})", "(b < imm) signed", "logic", AB,
              notes="Signed, as Frank specifies; PendVM compares unsigned."),
    _xor_into("SLLX", "RRA", 0x0E, "shl(R[{b}], {amt})", "b << amt", "shift", AB),
    _xor_into("SLLVX", "RRR", 0x0F, "shl(R[{b}], R[{c}])", "b << (c mod W)", "shift", ABC),
    _xor_into("SRLX", "RRA", 0x10, "srl(R[{b}], {amt})", "b >>> amt (logical)", "shift", AB),
    _xor_into("SRLVX", "RRR", 0x11, "srl(R[{b}], R[{c}])", "b >>> (c mod W)", "shift", ABC),
    _xor_into("SRAX", "RRA", 0x12, "sra(R[{b}], {amt})", "b >> amt (arithmetic)", "shift", AB),
    _xor_into("SRAVX", "RRR", 0x13, "sra(R[{b}], R[{c}])", "b >> (c mod W)", "shift", ABC),
    make("RL", "RA", 0x14, forward="R[{a}] = rotl(R[{a}], {amt})",
         backward="R[{a}] = rotr(R[{a}], {amt})", inverse="RR", doc="a = a rotated left by amt",
         energy_class="shift", writes=("a",)),
    make("RLV", "RR", 0x15, forward="R[{a}] = rotl(R[{a}], R[{b}])",
         backward="R[{a}] = rotr(R[{a}], R[{b}])", inverse="RRV",
         doc="a = a rotated left by (b mod W)", energy_class="shift", writes=("a",), distinct=AB),
    make("RR", "RA", 0x16, forward="R[{a}] = rotr(R[{a}], {amt})",
         backward="R[{a}] = rotl(R[{a}], {amt})", inverse="RL", doc="a = a rotated right by amt",
         energy_class="shift", writes=("a",)),
    make("RRV", "RR", 0x17, forward="R[{a}] = rotr(R[{a}], R[{b}])",
         backward="R[{a}] = rotl(R[{a}], R[{b}])", inverse="RLV",
         doc="a = a rotated right by (b mod W)", energy_class="shift", writes=("a",), distinct=AB),
    make("EXCH", "RR", 0x18, forward="_i = addr(R[{b}])\nR[{a}], MEM[_i] = MEM[_i], R[{a}]",
         backward="_i = addr(R[{b}])\nR[{a}], MEM[_i] = MEM[_i], R[{a}]",
         doc="swap a with MEM[b]", energy_class="mem", writes=("a",), distinct=AB,
         differentiable=True,
         **_on_banks("_i = addr(R[{b}])\nV[{a}], VM[_i] = VM[_i], V[{a}]")),
    _branch("BEQ", "RRO", 0x19, "R[{a}] == R[{b}]", "a == b"),
    _branch("BNE", "RRO", 0x1A, "R[{a}] != R[{b}]", "a != b"),
    _branch("BGEZ", "RO", 0x1B, "S(R[{a}]) >= 0", "a >= 0"),
    _branch("BGTZ", "RO", 0x1C, "S(R[{a}]) > 0", "a > 0"),
    _branch("BLEZ", "RO", 0x1D, "S(R[{a}]) <= 0", "a <= 0"),
    _branch("BLTZ", "RO", 0x1E, "S(R[{a}]) < 0", "a < 0"),
    _branch("BRA", "O", 0x1F, "True", "always"),
    make("RBRA", "O", 0x20, kind="rbra", forward="BR = -BR - {off}\nDIR = -1",
         backward="BR = -BR + {off}\nDIR = 1", doc="BR += off; DIR = -DIR (uncall)",
         energy_class="branch"),
    make("SWAPBR", "R", 0x21, kind="swapbr", forward="BR, R[{a}] = S(R[{a}]), BR & M",
         backward="BR, R[{a}] = S(R[{a}]), BR & M", doc="swap BR with a (call portal)",
         energy_class="branch", writes=("a",)),
    make("START", "N", 0x22, kind="start", forward="pass", backward="pass",
         doc="program entry; a backward run stops here", energy_class="control"),
    make("FINISH", "N", 0x23, kind="finish", forward="pass", backward="pass",
         doc="program exit; a forward run stops here", energy_class="control"),
    make("SHOW", "R", 0x24, forward="show(R[{a}])", backward="show(R[{a}])",
         aliases=("OUT", "OUTPUT"), doc="print a (in either direction)", energy_class="io"),
    make("EMIT", "R", 0x25, forward="emit(R[{a}])\nR[{a}] = 0",
         backward="R[{a}] ^= unemit()", doc="push a to the output tape; a = 0",
         energy_class="io", writes=("a",),
         notes="Backward, takes the last emitted word back off the tape."),
]

# --- fixed-point extension -------------------------------------------------

EXTENSION: list[Instruction] = [
    make("SWAP", "RR", 0x28, forward="R[{a}], R[{b}] = R[{b}], R[{a}]",
         backward="R[{a}], R[{b}] = R[{b}], R[{a}]", doc="swap a and b",
         energy_class="move", writes=("a", "b"), distinct=AB, extension=True,
         differentiable=True, **_on_banks("V[{a}], V[{b}] = V[{b}], V[{a}]")),
    make("ADDIS", "RIK", 0x29, forward="R[{a}] = (R[{a}] + ({imm} << (16 * {k}))) & M",
         backward="R[{a}] = (R[{a}] - ({imm} << (16 * {k}))) & M", doc="a += imm << 16k",
         energy_class="alu", writes=("a",), extension=True, differentiable=True,
         notes="With ADDI, loads any constant (the LI pseudo-instruction); a constant: "
               "gradients unchanged."),
    *_accumulate("ADDMUL", "SUBMUL", "RRR", 0x2A, 0x2B, "fmul(R[{b}], R[{c}])", "b * c",
                 "mul", distinct=ABC, extension=True, derivative=PRODUCT_DERIVATIVE,
                 term_overflow=_overflow_of("fmul", "R[{b}], R[{c}]"),
                 notes="Fixed-point product rounded half up: floor(b*c / 2^F + 1/2); an "
                       "overflow event when the product or the sum does not fit."),
    *_accumulate("ADDDIV", "SUBDIV", "RRR", 0x2C, 0x2D, "fdiv(R[{b}], R[{c}])", "b / c",
                 "div", distinct=ABC, extension=True, derivative=QUOTIENT_DERIVATIVE,
                 term_overflow=_overflow_of("fdiv", "R[{b}], R[{c}]"),
                 notes="Faults when c = 0; an overflow event when the quotient or the sum "
                       "does not fit."),
    make("ROT", "RRR", 0x2E, forward=_rotation("rot", "irot", "+"),
         backward=_rotation("irot", "rot", "-"), inverse="IROT",
         doc="(a, b) = Givens rotation of (a, b) by angle c", energy_class="func",
         writes=("a", "b"), distinct=(("a", "b"), ("a", "c"), ("b", "c")), extension=True,
         differentiable=True, notes="Three lifting shears; exactly undone by IROT; an overflow "
                                    "event when a shear (or the reduction's negation) wraps.",
         **_ROT_RULES),
    make("IROT", "RRR", 0x2F, forward=_rotation("irot", "rot", "+"),
         backward=_rotation("rot", "irot", "-"), inverse="ROT",
         doc="(a, b) = Givens rotation of (a, b) by angle -c", energy_class="func",
         writes=("a", "b"), distinct=(("a", "b"), ("a", "c"), ("b", "c")), extension=True,
         differentiable=True, rules_from="ROT",
         notes="Gradient mode runs ROT's rules the other way (IROT forward = ROT backward)."),
]

FUNC_OPCODE = 0x30
FUNC2_OPCODE = 0x31

#: The functions whose result can leave the format (they saturate at the ends of the
#: range; their primitive's overflow predicate is ``ovf_sat``): a result *at* an end
#: counts as an overflow event.  The others always fit.
SATURATING_FUNCTIONS = tuple(name for name in UNARY_FUNCTIONS + BINARY_FUNCTIONS
                             if primitive(f"fn_{name}").overflow == "ovf_sat")


for _i, _name in enumerate(UNARY_FUNCTIONS):
    EXTENSION += _accumulate(
        f"ADD{_name.upper()}", f"SUB{_name.upper()}", "RR", FUNC_OPCODE, FUNC_OPCODE,
        f"fn_{_name}(R[{{b}}])", f"{_name}(b)", "func", funct_add=2 * _i,
        funct_sub=2 * _i + 1, distinct=AB, extension=True,
        derivative=UNARY_DERIVATIVES[_name], term_overflow=_overflow_of(f"fn_{_name}", "R[{b}]"))
for _i, _name in enumerate(BINARY_FUNCTIONS):
    EXTENSION += _accumulate(
        f"ADD{_name.upper()}", f"SUB{_name.upper()}", "RRR", FUNC2_OPCODE, FUNC2_OPCODE,
        f"fn_{_name}(R[{{b}}], R[{{c}}])", f"{_name}(b, c)", "func", funct_add=2 * _i,
        funct_sub=2 * _i + 1, distinct=ABC, extension=True,
        derivative=BINARY_DERIVATIVES[_name],
        term_overflow=_overflow_of(f"fn_{_name}", "R[{b}], R[{c}]"))

#: Every instruction, PISA first.
INSTRUCTIONS: tuple[Instruction, ...] = tuple(PISA + EXTENSION)
