"""A debugging session: breakpoints, watchpoints, motion commands and the values they show.

The machine moves on a :class:`~revasm.debug.timeline.Timeline` (forward, or backward by
running the machine the other way); a motion command (step, next, finish, continue, and
each backward) moves it until its own end or a stop: a breakpoint, a watchpoint, a fault,
the beginning or the end, the gradient switch, the step budget or Ctrl-C.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from revasm.assembler.image import Image
from revasm.isa.fixed_point import word_format
from revasm.machine import MachineFault
from revasm.machine.values import WORD, ValueRuleError, name_kind, word_of
from revasm.sim.host import GradientError, loss_place
from revasm.sim.reference import Machine

from .breakpoints import (
    Breakpoint,
    DebugError,
    Watchpoint,
    parse_address,
    parse_breakpoint,
    parse_watchpoint,
    resolve_name,
)
from .source_map import STACK_POINTER, SourceMap
from .timeline import Frame, Timeline

#: How many instructions one command may execute before it stops on its own
DEFAULT_STEP_BUDGET = 10_000_000
#: How far a line step looks back for the place before (a jump, a call's entry: a few)
LOOK_BACK_LIMIT = 64


@dataclass
class Stop:
    """Why a motion command stopped.

    ``reason``: ``step`` (the steps asked for are done), ``breakpoint``, ``watchpoint``,
    ``end`` (the last pass halted: nothing later), ``beginning`` (back at START with
    nothing earlier), ``switch`` (gradient mode: the forward pass ended and the gradient
    pass begins), ``fault``, ``limit`` (the step budget ran out) or ``interrupted``
    (Ctrl-C).
    """

    reason: str
    steps: int = 0
    backward: bool = False
    breakpoint: Breakpoint | None = None
    changes: list[tuple[Watchpoint, int, int]] = field(default_factory=list)
    fault: MachineFault | None = None


class Session:
    """One program on one reference machine, moved forward and backward in time."""

    def __init__(self, image: Image, *, registers: dict[int, int] | None = None,
                 memory: dict[int, int] | None = None, source: SourceMap | None = None,
                 grad: bool = False, loss: str | None = None,
                 step_budget: int = DEFAULT_STEP_BUDGET) -> None:
        self.image = image
        self.source = source or SourceMap(image)
        self.fmt = word_format(image.width)
        self.machine = Machine(image)
        for register, word in (registers or {}).items():
            if register:
                self.machine.set_register(register, word)
        for address, word in (memory or {}).items():
            if not (address < len(image) and image.is_code[address]):
                self.machine.set_memory(address, word)
        self.grad = grad
        self.timeline = Timeline(self.machine, self.source,
                                 loss=_loss_place(image, loss) if grad else None)
        self.step_budget = step_budget
        self.breakpoints: dict[int, Breakpoint] = {}
        self.watchpoints: dict[int, Watchpoint] = {}
        self._numbers = 0
        #: set (by a signal handler) to stop a motion command between two instructions
        self.interrupt_requested = False

    # --- where we are ------------------------------------------------------------------

    @property
    def pc(self) -> int:
        return self.machine.pc

    @property
    def time(self) -> int:
        """Instructions executed since START along the timeline (both passes)."""
        return self.timeline.time

    @property
    def phase(self) -> str:
        """``forward`` or, after the switch in gradient mode, ``gradient``."""
        return self.timeline.phase

    @property
    def stack(self) -> list[Frame]:
        """The portal calls in progress, outermost first."""
        return self.timeline.stack

    @property
    def fault(self) -> MachineFault | None:
        """The fault the session stopped at (None: it can go on)."""
        return self.timeline.fault

    @property
    def at_end(self) -> bool:
        return self.timeline.at_end

    def function(self) -> str | None:
        """The function the PC is in: the innermost portal call's, else the program."""
        return self.stack[-1].function if self.stack else None

    # --- breakpoints and watchpoints ------------------------------------------------------

    def add_breakpoint(self, spec: str) -> Breakpoint:
        self._numbers += 1
        point = parse_breakpoint(spec, self.source, self._numbers)
        self.breakpoints[point.number] = point
        return point

    def add_watchpoint(self, spec: str) -> Watchpoint:
        self._numbers += 1
        point = parse_watchpoint(spec, self.source, self._numbers)
        point.last = self._watched_word(point)
        self.watchpoints[point.number] = point
        return point

    def delete(self, number: int | None = None) -> list[int]:
        """Delete one breakpoint or watchpoint by number, or all of them (None)."""
        if number is None:
            gone = sorted(self.breakpoints) + sorted(self.watchpoints)
            self.breakpoints.clear()
            self.watchpoints.clear()
            return gone
        if self.breakpoints.pop(number, None) is None and \
                self.watchpoints.pop(number, None) is None:
            raise DebugError(f"no breakpoint or watchpoint {number}")
        return [number]

    def delete_at(self, pc: int) -> list[int]:
        """Delete the breakpoints that stop at ``pc`` (PendVM's ``unbreak ADDR``)."""
        gone = [n for n, point in self.breakpoints.items() if pc in point.pcs]
        if not gone:
            raise DebugError(f"no breakpoint at pc {pc}")
        for number in gone:
            del self.breakpoints[number]
        return gone

    def _watched_word(self, point: Watchpoint) -> int:
        if point.register is not None:
            return self.machine.registers[point.register]
        assert point.address is not None
        return self.machine.get_memory(point.address, signed=False)

    # --- motion ---------------------------------------------------------------------------

    def step(self, count: int = 1, *, backward: bool = False) -> Stop:
        """``count`` instructions forward (or back), stopping early at a watchpoint."""
        return self._run(lambda done: done >= count, backward, breakpoints=False)

    def step_line(self, *, backward: bool = False, over: bool = False) -> Stop:
        """To the start of the next (previous) line of the debugged file: the PAL line (a
        pseudo-instruction may be several instructions), or the Python line of a compiled
        program; ``over`` runs portal calls through whole.

        Both ways stop at the same places: where a *run* of one line (in one call) begins,
        at its first instruction boundary with no jump in flight, so ``reverse-step`` undoes
        ``step``.  A call's entry (the function's own line between its portal and its
        body) is no stop: ``step`` into a call stops on the body's first line, and
        ``reverse-step`` from there on the caller's line that made the call, as gdb's
        ``step`` skips a prologue."""
        start = (self.source.line_of(self.pc), len(self.stack))
        over_depth = len(self.stack) if over else None

        def done(steps: int) -> bool:
            if steps == 0:
                return False
            here = self._line_place(over_depth)
            if here is None or here == start:
                return False
            # going back, stop only where the line's run began: the place before is elsewhere
            return not backward or self._line_place_before(over_depth) != here
        return self._run(done, backward, breakpoints=True)

    def _line_place(self, over_depth: int | None, pc: int | None = None) -> \
            tuple[int, int] | None:
        """(line, call depth) where a line step may stop at ``pc`` (default: the PC), or
        None: a jump in flight, a PC with no line, a call's entry before its body, or (for
        ``next``, ``over_depth`` given) inside a call deeper than where it began."""
        pc = self.pc if pc is None else pc
        if self.machine.br or (over_depth is not None and len(self.stack) > over_depth):
            return None
        line = self.source.line_of(pc)
        if line is None or self._at_call_entry(pc):
            return None
        return line, len(self.stack)

    def _at_call_entry(self, pc: int) -> bool:
        """``pc`` is on the called function's own line (its ``def`` or ``procedure``)
        right after the portal that entered the innermost call, in the direction the call
        runs: the entry, before the body's first line."""
        if not self.stack:
            return False
        source = self.source
        portal = self.stack[-1].portal_pc
        line = source.line_of(portal)
        direction = self.machine.direction
        at = portal + direction
        while line is not None and 0 <= at < len(self.image) and source.line_of(at) == line:
            if at == pc:
                return True
            at += direction
        return False

    def _line_place_before(self, over_depth: int | None) -> tuple[int, int] | None:
        """:meth:`_line_place` of the last place before this one where a line step could
        stop (None: nothing earlier in this pass).  Found by looking back: the timeline
        goes back and comes forward again, leaving the machine as it was."""
        timeline = self.timeline
        if timeline.at_pass_start():
            return None
        last = timeline.last_pc()
        cell = self.machine.program.cell(last) if last is not None else None
        if last is not None and cell is not None and cell.kind == "data":
            # no jump lands on a data instruction and it enters no call: the place before
            # is its own, in this call, with no jump in flight
            place = self._line_place(over_depth, last)
            if place is not None:
                return place
        with timeline.looking_back():
            for _ in range(LOOK_BACK_LIMIT):
                if timeline.at_pass_start():
                    return None
                pc, depth = self.pc, len(self.stack)
                timeline.backward()
                if over_depth is not None and len(self.stack) > over_depth:
                    # `next` runs the call through whole: before it, its jump at pc
                    line = self.source.line_of(pc)
                    return None if line is None else (line, depth)
                place = self._line_place(over_depth)
                if place is not None:
                    return place
        return None

    def finish(self, *, backward: bool = False) -> Stop:
        """Out of the current call: forward to its return, or back to its call."""
        depth = len(self.stack)
        if depth == 0:
            raise DebugError("not inside a portal call: there is nothing to finish")
        return self._run(lambda steps: len(self.stack) < depth and not self.machine.br,
                         backward, breakpoints=True)

    def cont(self, *, backward: bool = False) -> Stop:
        """On until a breakpoint, a watchpoint, the end (beginning) or a fault."""
        return self._run(lambda steps: False, backward, breakpoints=True)

    def restart(self) -> Stop:
        """Back to START (running the machine backward: the initial state comes back),
        through the gradient switch and past breakpoints and watchpoints."""
        steps = 0
        while True:
            stop = self._run(lambda steps: False, True, breakpoints=False, watch=False)
            steps += stop.steps
            if stop.reason not in ("switch", "limit"):
                break
        for point in self.watchpoints.values():
            point.last = self._watched_word(point)
        stop.steps = steps
        return stop

    def _run(self, done: Callable[[int], bool], backward: bool, *, breakpoints: bool,
             watch: bool = True) -> Stop:
        if self.fault is not None and not backward:
            raise DebugError(f"the machine faulted ({self.fault.kind}) at pc {self.fault.pc}: "
                             "go back (reverse-step, reverse-continue) to see how it got there")
        steps = 0
        while True:
            if done(steps):
                return Stop("step", steps, backward)
            if steps >= self.step_budget:
                return Stop("limit", steps, backward)
            if self.interrupt_requested:  # Ctrl-C: stop between two instructions
                self.interrupt_requested = False
                return Stop("interrupted", steps, backward)
            before, time_before = self.phase, self.time
            try:
                moved = self.timeline.backward() if backward else self.timeline.forward()
            except MachineFault as fault:  # going back, a fault leaves the state as it was
                # an uncaught jump's landing instruction ran: a step, as the fault counts it
                return Stop("fault", steps + abs(self.time - time_before), backward,
                            fault=fault)
            if not moved:
                return Stop("beginning" if backward else "end", steps, backward)
            if self.phase != before:  # the gradient switch, in either direction
                return Stop("switch", steps, backward)
            steps += 1
            changes = self._watch_changes() if watch else []
            if changes:
                return Stop("watchpoint", steps, backward, changes=changes)
            if breakpoints:
                hit = self._breakpoint_here(backward)
                if hit is not None:
                    hit.hits += 1
                    return Stop("breakpoint", steps, backward, breakpoint=hit)

    def _watch_changes(self) -> list[tuple[Watchpoint, int, int]]:
        changes = []
        for point in self.watchpoints.values():
            word = self._watched_word(point)
            if word != point.last:
                changes.append((point, point.last, word))
                point.last = word
                point.hits += 1
        return changes

    def _breakpoint_here(self, backward: bool) -> Breakpoint | None:
        pc = self.pc
        for point in self.breakpoints.values():
            if pc not in point.pcs:
                continue
            if point.kind in ("python-line", "janus-line"):
                # entering the line: the instruction before (after, going back) is elsewhere
                previous = self.timeline.last_pc()
                if previous is not None and previous in point.pcs:
                    continue
            return point
        return None

    # --- values -------------------------------------------------------------------------------

    def registers(self, bank: str = "") -> list[int]:
        """The 32 registers as signed integers (``bank="G"``: the gradient bank)."""
        words = self.machine.registers if not bank else self.machine.bank(bank)
        return [self.fmt.signed(word) for word in words]

    def memory_word(self, address: int, bank: str = "") -> int:
        """One memory word, signed (``bank="GM"``: its gradient)."""
        if not bank:
            return self.machine.get_memory(address)
        index = self.machine.memory_index(address)
        return 0 if index is None else self.fmt.signed(self.machine.bank(bank)[index])

    def nonzero_memory(self, bank: str = "") -> dict[int, int]:
        """Every data word that is not zero (``bank="GM"``: whose gradient is not zero),
        signed, by address: the whole address space, sparse words included."""
        machine = self.machine
        words = machine.memory if not bank else machine.bank(bank)
        code = self.image.is_code
        out = {}
        for address, index in machine.word_addresses():
            if words[index] and not (address < len(code) and code[address]):
                out[address] = self.fmt.signed(words[index])
        return dict(sorted(out.items()))

    def value_of(self, word: int, fixed: bool) -> int | float:
        """A word as a person reads it: a real if it is fixed point, else signed."""
        return self.real(word) if fixed else self.fmt.signed(word & self.fmt.mask)

    def real(self, word: int) -> float:
        return self.fmt.to_real(word & self.fmt.mask)

    def named(self, bank: str = "") -> dict[str, int | float]:
        """Declared names -> value (reals where declared fixed), or their gradient."""
        return {name: self.real(word) if (fixed or bank) else self.fmt.signed(word)
                for name, (word, fixed) in self.named_words(bank).items()}

    def named_words(self, bank: str = "") -> dict[str, tuple[int, bool]]:
        """Declared names -> (their unsigned W-bit word, declared fixed), or the words of
        their gradient: what :meth:`named` shows, before it is read as a value."""
        out: dict[str, tuple[int, bool]] = {}
        for name, declared in self.image.names.items():
            if declared.register is not None:
                word = self.registers(bank)[declared.register]
            else:
                assert declared.address is not None
                word = self.memory_word(declared.address, "GM" if bank else "")
            out[name] = (word & self.fmt.mask, bool(declared.fixed))
        return out

    def python_variables(self, bank: str = "") -> dict[str, int | float]:
        """The variables of the compiled function the PC is in, by name (docs/abi.md homes:
        a register, or a frame word at SP + offset).  Only the innermost call's: while a
        call runs, its callers' variables are saved on the stack, not in their homes."""
        return {name: self.real(word) if (fixed or bank) else self.fmt.signed(word)
                for name, (word, fixed) in self.python_words(bank).items()}

    def python_words(self, bank: str = "") -> dict[str, tuple[int, bool]]:
        """The words of :meth:`python_variables` (unsigned) and whether each is fixed."""
        function = self.source.function_at(self.pc)
        if function is None:
            return {}
        registers = self.registers(bank)
        sp = self.machine.registers[STACK_POINTER]
        out: dict[str, tuple[int, bool]] = {}
        for variable in self.source.variables(function):
            if variable.register is not None:
                word = registers[variable.register]
            else:
                assert variable.frame_offset is not None
                word = self.memory_word((sp + variable.frame_offset) & self.fmt.mask,
                                        "GM" if bank else "")
            out[variable.name] = (word & self.fmt.mask, bool(variable.fixed))
        return out

    def output(self) -> list[int]:
        """Every SHOW/EMIT word so far, signed."""
        return [self.fmt.signed(word) for word in self.machine.output]

    def tape(self) -> list[int]:
        """The EMIT tape (what running backward takes back), signed."""
        return [self.fmt.signed(word) for word in self.machine.emitted]

    def set_value(self, name: str, text: str) -> None:
        """Store a value at a register, a declared name or ``[ADDR]`` by the one rule
        (machine/values.py, as ``--set`` reads it): an ``int`` name an integer, a ``fixed``
        name a real, a register or a bare address a raw word, ``raw:N`` any word.  The
        past is then what runs back from the new state."""
        if name.startswith("[") and name.endswith("]"):
            address = parse_address(name[1:-1], self.source)
            declared = next((d for d in self.image.names.values() if d.address == address),
                            None)
            word = self._word(text, WORD if declared is None else name_kind(declared),
                              name if declared is None else declared.name)
            try:
                self.machine.set_memory(address, word)
            except ValueError as exc:
                raise DebugError(str(exc)) from None
        else:
            place = resolve_name(self.image, name, "it cannot be set")
            word = self._word(text, name_kind(place), name)
            if place.register is not None:
                self.machine.set_register(place.register, word)
            else:
                assert place.address is not None
                self.machine.set_memory(place.address, word)
        for point in self.watchpoints.values():
            point.last = self._watched_word(point)

    def _word(self, text: str, kind: str, place: str) -> int:
        try:
            return word_of(text, self.fmt, kind, place)
        except ValueRuleError as exc:
            raise DebugError(str(exc)) from None


def _loss_place(image: Image, loss: str | None) -> tuple[int | None, int | None]:
    """The loss's register or address: ``loss`` or the one declared ``.loss`` (the host
    protocol's own rules, ``sim/host.py``)."""
    try:
        place = loss_place(image, loss)
    except GradientError as exc:
        raise DebugError(str(exc)) from None
    return place.register, place.address
