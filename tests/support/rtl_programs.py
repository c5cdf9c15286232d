"""Random programs as lockstep jobs for the RTL: value mode, and gradient mode one way and
both ways.

``make test`` runs a bounded sample (``tests/rtl/verification/test_cosim.py``,
``tests/rtl/verification/test_verilator.py``); ``bench/rtl_lockstep.py`` runs the same jobs
on hundreds of programs per width on both paths.  The gradient jobs seed G of the last
register the program writes (a loss that the program's instructions carry gradients into),
so the adjoints of every instruction on the way are compared -- every G register, G[0]
included, and GM after each run.
"""
from __future__ import annotations

from program_generators import ProgramCase

from revasm.assembler.image import Image
from revasm.isa import IllegalInstruction, decode
from revasm.rtl.hardware.params import CoreParams
from revasm.rtl.verification.cosim import Job
from revasm.sim.host import Place

#: The job kinds of one program: value mode forward and backward; the host's gradient
#: protocol (forward in value mode, G[loss] = 1, backward in gradient mode); and gradient
#: mode both ways (the forward run in gradient mode too).
KINDS = ("value", "gradient", "gradient-both")

#: The cores the jobs run on, by width (the gradient bank on; memory enough for the
#: generators' images and data at the low addresses).
MEMORY_WORDS = {32: 2048, 64: 1024}


def params(width: int, memory_words: int | None = None) -> CoreParams:
    """The core of the random-program jobs at ``width`` (the Amaranth path takes fewer
    memory words: the host clears GM one word per cycle before each job)."""
    return CoreParams(width=width, memory_words=memory_words or MEMORY_WORDS[width],
                      gradient=True)


def loss_register(image: Image) -> int:
    """The last register an instruction of ``image`` writes (its ``a`` operand), else 1."""
    written = 1
    for word, code in zip(image.words, image.is_code):
        if not code:
            continue
        try:
            ins, operands = decode(word & 0xFFFFFFFF)
        except IllegalInstruction:
            continue
        if "a" in ins.operand_names and operands.get("a"):
            if ins.operand_kinds[ins.operand_names.index("a")] == "reg":
                written = operands["a"]
    return written


def jobs(case: ProgramCase, name: str, kinds: tuple[str, ...] = KINDS) -> list[Job]:
    """``case`` as one lockstep job per kind, named ``"<name> <kind>"``."""
    loss = Place("loss", register=loss_register(case.image))
    made = {
        "value": lambda: Job(case.image, case.registers, case.memory, name=f"{name} value"),
        "gradient": lambda: Job(case.image, case.registers, case.memory,
                                name=f"{name} gradient", loss=loss),
        "gradient-both": lambda: Job(case.image, case.registers, case.memory,
                                     name=f"{name} gradient-both", loss=loss,
                                     gradient_forward=True),
    }
    return [made[kind]() for kind in kinds]


def problems(results) -> list[str]:
    """Every run that diverged from the reference or hit an unimplemented instruction."""
    return [f"{r.job.name}: {run.direction:+d}: {run.status}: {run.divergence}"
            for r in results for run in r.runs if run.status not in ("finished", "fault")]


def miscount(monkeypatch, wrong, *, after: bool = False) -> None:
    """Make the reference count one cycle more for the steps ``wrong(entry, backward,
    gradient)`` names -- before their commit, or (``after``) after it, as the lockstep
    reads it too -- so that the lockstep's check of the count must find it (programs
    decoded afresh: none keeps a right count)."""
    from dataclasses import replace

    from revasm.isa.timing import step_timing as real
    from revasm.rtl.verification import cosim
    from revasm.sim.reference import predecode
    from revasm.sim.reference.machine import Program

    def timing(entry, backward, gradient=False, width=32):
        right = real(entry, backward, gradient, width)
        if not wrong(entry, backward, gradient):
            return right
        return replace(right, fixed=right.fixed + 1, after_commit=right.after_commit + after)
    monkeypatch.setattr(predecode, "step_timing", timing)
    monkeypatch.setattr(cosim, "step_timing", timing)
    monkeypatch.setattr(Program, "_cache", {})
