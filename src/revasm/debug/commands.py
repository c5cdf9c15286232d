"""The debugger's command language: one line in, a list of events (JSON-ready dicts) out.

The terminal (``repl.py``), ``--commands FILE`` and ``--json`` all go through
:meth:`Interpreter.execute`, so a script drives exactly the debugger a person uses; the
text a person reads is rendered from the same events (``render.py``).  Commands follow
gdb's names (``step``, ``reverse-continue``, ...); PendVM's REPL names (``reg``,
``read``, ``state``, ``dir``, ``unbreak``, ``run``, ``clear``, ``set``) are aliases
with PendVM's meaning.  docs/debugger.md lists them all, with the event format.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from revasm.machine import MachineFault, fault_json

from .breakpoints import DebugError, parse_address, resolve_name
from .session import Session, Stop
from .timeline import GRADIENT_PASS

Event = dict[str, Any]


#: Every command by its canonical name, with its one-line help; ALIASES map other names to it.
HELP: dict[str, str] = {
    "step": "step [N]: to the start of the next line (PAL, or Python for compiled programs)",
    "stepi": "stepi [N]: one machine instruction forward",
    "next": "next [N]: to the next line, running portal calls through whole",
    "finish": "finish: on until the current portal call returns",
    "continue": "continue: on until a breakpoint, a watchpoint, the end or a fault",
    "reverse-step": "reverse-step [N]: back to the start of the previous line (runs backward)",
    "reverse-stepi": "reverse-stepi [N]: one machine instruction back",
    "reverse-next": "reverse-next [N]: back to the previous line, over portal calls",
    "reverse-finish": "reverse-finish: back to the call of the current portal call",
    "reverse-continue": "reverse-continue: back until a breakpoint, a watchpoint or START",
    "break": "break WHERE: LABEL, ADDR (a PC), :LINE, FILE.pal:LINE or FILE.py:LINE",
    "watch": "watch WHAT: stop when $N, [ADDR] or a declared name changes",
    "delete": "delete [N]: delete breakpoint/watchpoint N (all without N)",
    "unbreak": "unbreak [ADDR]: delete the breakpoints at ADDR (default: the PC) (PendVM)",
    "info": "info breakpoints|registers|locals|frames: what is set, the registers, values",
    "print": "print WHAT: $N, [ADDR], a declared name, a Python variable, PC, BR, DIR",
    "registers": "registers: every register (and its gradient in --grad mode) (PendVM: reg)",
    "memory": "memory ADDR [N]: N words from ADDR (PendVM: read)",
    "named": "named: the declared names (and Python variables), reals where declared so",
    "gradient": "gradient: the gradient bank beside the value bank (--grad)",
    "output": "output: the SHOW/EMIT log and the EMIT tape",
    "backtrace": "backtrace: the portal calls in progress, innermost first",
    "state": "state: PC, line, BR, DIR, pass and time (PendVM)",
    "list": "list: the source around the PC",
    "dir": "dir [f|r]: which way step/next/finish/continue go (PendVM; no argument: flip)",
    "run": "run: back to START, then continue (PendVM)",
    "restart": "restart: back to START (the machine runs backward)",
    "set": "set WHAT VALUE: store at $N, [ADDR] or a declared name, as --set reads it "
           "(raw:N for a raw word) (PendVM)",
    "clear": "clear ADDR: set a data word to 0 (PendVM)",
    "help": "help: this list",
    "quit": "quit: end the session",
}

ALIASES: dict[str, str] = {
    "s": "step", "si": "stepi", "n": "next", "ni": "next", "fin": "finish",
    "c": "continue", "cont": "continue",
    "rs": "reverse-step", "rsi": "reverse-stepi", "rn": "reverse-next",
    "rf": "reverse-finish", "rc": "reverse-continue",
    "b": "break", "w": "watch", "d": "delete", "p": "print",
    "reg": "registers", "regs": "registers", "read": "memory", "x": "memory",
    "locals": "named", "grad": "gradient", "bt": "backtrace", "where": "backtrace",
    "l": "list", "h": "help", "q": "quit", "exit": "quit",
}

#: Every word the command line completes.
COMMAND_WORDS = sorted(set(HELP) | set(ALIASES))


class Interpreter:
    """Reads commands for one session and answers each with events."""

    def __init__(self, session: Session) -> None:
        self.session = session
        #: the way step/next/finish/continue go (PendVM's ``dir``)
        self.backward = False
        self.done = False
        self._commands: dict[str, Callable[[list[str]], list[Event]]] = {
            "step": lambda a: self._motion(a, "step"),
            "stepi": lambda a: self._motion(a, "stepi"),
            "next": lambda a: self._motion(a, "next"),
            "finish": lambda a: self._motion(a, "finish"),
            "continue": lambda a: self._motion(a, "continue"),
            "break": self._break, "watch": self._watch, "delete": self._delete,
            "unbreak": self._unbreak, "info": self._info, "print": self._print,
            "registers": lambda a: [self.registers_event()],
            "memory": self._memory, "named": lambda a: [self.named_event()],
            "gradient": lambda a: [self.gradient_event()],
            "output": lambda a: [self.output_event()],
            "backtrace": lambda a: [self.frames_event()],
            "state": lambda a: [self.where_event("state")], "list": self._list,
            "dir": self._dir, "run": self._run, "restart": self._restart, "set": self._set,
            "clear": self._clear, "help": self._help, "quit": self._quit,
        }

    # --- the one entry point ------------------------------------------------------------

    def execute(self, line: str) -> list[Event]:
        """Run one command line; errors in it are an ``error`` event, never an exception."""
        words = line.split()
        if not words or words[0].startswith("#"):
            return []
        name, args = words[0].lower(), words[1:]
        backward = False
        if name.startswith("reverse-"):
            name, backward = name[len("reverse-"):], True
        name = ALIASES.get(name, name)
        if name.startswith("reverse-"):  # an alias of a reverse command (rs, rc, ...)
            name, backward = name[len("reverse-"):], True
        if name not in self._commands or (backward and name not in _MOTIONS):
            return [{"event": "error", "command": line.strip(),
                     "message": f"unknown command {words[0]!r} (help lists the commands)"}]
        try:
            if backward:
                return self._motion(args, name, backward=True)
            return self._commands[name](args)
        except DebugError as exc:
            return [{"event": "error", "command": line.strip(), "message": str(exc)}]

    # --- motion ---------------------------------------------------------------------------

    def _motion(self, args: list[str], name: str, backward: bool = False) -> list[Event]:
        going_back = backward != self.backward  # after `dir r`, reverse-step goes forward
        count = _count(args, limit=self.session.step_budget,
                       what="the session's --max-steps") \
            if name in ("step", "stepi", "next") else 1
        session = self.session
        stop: Stop | None = None
        total = 0
        for _ in range(count):
            if name == "stepi":
                stop = session.step(backward=going_back)
            elif name == "step":
                stop = session.step_line(backward=going_back)
            elif name == "next":
                stop = session.step_line(backward=going_back, over=True)
            elif name == "finish":
                stop = session.finish(backward=going_back)
            else:
                stop = session.cont(backward=going_back)
            total += stop.steps
            if stop.reason != "step":
                break
            if total >= session.step_budget:  # one command runs at most the budget
                stop = Stop("limit", total, going_back)
                break
        assert stop is not None
        stop.steps = total
        command = ("reverse-" if going_back else "") + name
        return [self.stop_event(stop, command)]

    # --- events ----------------------------------------------------------------------------

    def where_event(self, event: str = "state") -> Event:
        """Where the session is: PC, source line(s), instruction, BR, DIR, pass, time."""
        session = self.session
        source = session.source
        machine = session.machine
        pc = machine.pc
        out: Event = {
            "event": event, "pc": pc, "file": source.pal_file, "line": source.pal_line(pc),
            "label": source.label_at(pc), "instruction": _instruction(session, pc),
            "source": source.instruction_text(pc),
            "br": machine.br, "dir": machine.direction, "time": session.time,
            "pass": session.phase, "gradient_mode": machine.gradient,
            "function": session.function(), "depth": len(session.stack),
            "halted": machine.halted,
        }
        if source.program is not None:
            # the user's file and line (Janus or Python); the generated PAL as a detail
            out.update(file=source.file, line=source.python_line(pc),
                       source=source.source_text(source.python_line(pc) or 0).strip(),
                       pal_file=source.pal_file, pal_line=source.pal_line(pc),
                       pal_source=source.instruction_text(pc))
            out["python_file"] = source.python_file
            out["python_line"] = source.python_line(pc)
            out["python_function"] = source.function_at(pc)
        return out

    def stop_event(self, stop: Stop, command: str) -> Event:
        out = self.where_event("stopped")
        out.update(reason=stop.reason, command=command, steps=stop.steps,
                   direction="backward" if stop.backward else "forward")
        if stop.breakpoint is not None:
            out["breakpoint"] = stop.breakpoint.number
        if stop.changes:
            value = self.session.value_of
            out["changes"] = [{"watchpoint": point.number, "spec": point.spec,
                               "old": value(old, point.fixed), "new": value(new, point.fixed)}
                              for point, old, new in stop.changes]
        if stop.fault is not None:
            out["fault"] = fault_event(stop.fault)
        if stop.reason == "switch":
            out["message"] = (("forward pass finished: grad[loss] = 1, gradient mode on; the "
                               "gradient pass runs from FINISH back to START")
                              if self.session.phase == GRADIENT_PASS else
                              "back over the switch: the seed taken out, gradient mode off")
        if stop.reason == "limit":
            out["message"] = (f"stopped after {stop.steps} steps without reaching a stop "
                              "(--max-steps); the same command goes on")
        return out

    def registers_event(self) -> Event:
        session = self.session
        out: Event = {"event": "registers",
                      "registers": {f"${i}": v for i, v in enumerate(session.registers())},
                      "br": session.machine.br, "dir": session.machine.direction,
                      "pc": session.pc}
        if session.grad:
            out["gradient"] = {f"${i}": session.real(v)
                               for i, v in enumerate(session.registers("G"))}
        return out

    def named_event(self) -> Event:
        session = self.session
        out: Event = {"event": "named", "named": session.named()}
        if session.source.program is not None:
            out["python"] = session.python_variables()
        if session.grad:
            out["gradient"] = session.named("G")
            if session.source.program is not None:
                out["python_gradient"] = session.python_variables(bank="G")
        return out

    def gradient_event(self) -> Event:
        session = self.session
        if not session.grad:
            raise DebugError("the gradient bank is there in gradient mode: revasm debug --grad")
        values = session.registers()
        gradients = session.registers("G")
        words, word_gradients = session.nonzero_memory(), session.nonzero_memory("GM")
        named_gradients = session.named("G")
        return {"event": "gradient", "pass": session.phase,
                "gradient_mode": session.machine.gradient,
                "registers": {f"${i}": {"word": values[i], "value": session.real(values[i]),
                                        "gradient": session.real(gradients[i])}
                              for i in range(1, len(values)) if values[i] or gradients[i]},
                "memory": {str(address): {"word": words.get(address, 0),
                                          "value": session.real(words.get(address, 0)),
                                          "gradient": session.real(word_gradients.get(address,
                                                                                      0))}
                           for address in sorted(words.keys() | word_gradients.keys())},
                "named": {name: {"value": value, "gradient": named_gradients[name]}
                          for name, value in session.named().items()}}

    def output_event(self) -> Event:
        return {"event": "output", "output": self.session.output(),
                "tape": self.session.tape()}

    def frames_event(self) -> Event:
        session = self.session
        source = session.source
        frames = [{"function": (source.function_at(session.pc) if source.program is not None
                                else session.function()) or "(program)",
                   "pc": session.pc, "file": source.file, "line": source.line_of(session.pc)}]
        for depth, frame in enumerate(reversed(session.stack)):
            outer = session.stack[-depth - 2].function if depth + 1 < len(session.stack) \
                else "(program)"
            if source.program is not None:
                outer = source.function_at(frame.call_pc) or outer
            frames.append({"function": outer, "pc": frame.call_pc, "file": source.file,
                           "line": source.line_of(frame.call_pc), "calls": frame.function})
        return {"event": "frames", "frames": frames}

    # --- breakpoints ------------------------------------------------------------------------

    def _break(self, args: list[str]) -> list[Event]:
        spec = " ".join(args) if args else str(self.session.pc)
        point = self.session.add_breakpoint(spec)
        return [{"event": "breakpoint", "action": "set", **point.to_json()}]

    def _watch(self, args: list[str]) -> list[Event]:
        if not args:
            raise DebugError("say what to watch: $N, [ADDR] or a declared name")
        point = self.session.add_watchpoint(" ".join(args))
        return [{"event": "watchpoint", "action": "set", **point.to_json()}]

    def _delete(self, args: list[str]) -> list[Event]:
        number = int(args[0]) if args and args[0].isdigit() else None
        if args and number is None:
            raise DebugError(f"{args[0]!r} is not a breakpoint number")
        return [{"event": "deleted", "ids": self.session.delete(number)}]

    def _unbreak(self, args: list[str]) -> list[Event]:
        pc = parse_address(args[0], self.session.source) if args else self.session.pc
        return [{"event": "deleted", "ids": self.session.delete_at(pc)}]

    def _info(self, args: list[str]) -> list[Event]:
        what = args[0] if args else "breakpoints"
        if "breakpoints".startswith(what) or "watchpoints".startswith(what):
            return [{"event": "breakpoints",
                     "breakpoints": [p.to_json() for p in self.session.breakpoints.values()],
                     "watchpoints": [p.to_json() for p in self.session.watchpoints.values()]}]
        if "registers".startswith(what):
            return [self.registers_event()]
        if "locals".startswith(what) or "named".startswith(what):
            return [self.named_event()]
        if "frames".startswith(what) or "stack".startswith(what):
            return [self.frames_event()]
        raise DebugError("info breakpoints, registers, locals or frames")

    # --- values ------------------------------------------------------------------------------

    def _print(self, args: list[str]) -> list[Event]:
        if not args:
            raise DebugError("say what to print: $N, [ADDR], a name, PC, BR or DIR")
        return [self.value_event(" ".join(args))]

    def value_event(self, what: str) -> Event:
        """One value by the name a person types (``print`` and DAP's ``evaluate``)."""
        session = self.session
        upper = what.upper()
        out: Event = {"event": "value", "name": what}
        if upper in ("PC", "BR", "DIR"):
            out["value"] = {"PC": session.pc, "BR": session.machine.br,
                            "DIR": session.machine.direction}[upper]
            return out
        if what.startswith("[") and what.endswith("]"):
            address = parse_address(what[1:-1], session.source)
            out["value"] = session.memory_word(address)
            if session.grad:
                out["gradient"] = session.real(session.memory_word(address, "GM"))
            return out
        python = session.python_variables()
        if what in python:
            out["value"] = python[what]
            if session.grad:
                out["gradient"] = session.python_variables(bank="G")[what]
            return out
        if what in session.image.names:
            out["value"] = session.named()[what]
            if session.grad:
                out["gradient"] = session.named("G")[what]
            return out
        if what.startswith("$"):
            place = resolve_name(session.image, what)
            assert place.register is not None
            out["value"] = session.registers()[place.register]
            out["real"] = session.real(out["value"])
            if session.grad:
                out["gradient"] = session.real(session.registers("G")[place.register])
            return out
        inlined = inlined_homes(what, python)
        if len(inlined) == 1:  # a local of an inlined call, by the name the source gives it
            (home,) = inlined
            out["name"] = f"{what} ({home}: of an inlined call)"
            out["value"] = python[home]
            if session.grad:
                out["gradient"] = session.python_variables(bank="G")[home]
            return out
        if inlined:
            raise DebugError(f"{what!r} is a local of more than one inlined call here: name "
                             f"which -- {', '.join(inlined)} (NAME__FUNCTION then the line "
                             "and column of the call)")
        names = sorted(set(python) | set(session.image.names))
        raise DebugError(f"{what!r} is not $N, [ADDR], PC, BR, DIR or a name "
                         f"({', '.join(names) or 'none declared'})")

    def _memory(self, args: list[str]) -> list[Event]:
        if not args:
            raise DebugError("say which address: memory ADDR [N]")
        session = self.session
        address = parse_address(args[0].strip("[]"), session.source)
        count = _count(args[1:], default=16, limit=MEMORY_WORDS_SHOWN,
                       what="the words one memory command shows")
        mask = session.fmt.mask
        addresses = [(address + i) & mask for i in range(count)]
        out: Event = {"event": "memory", "address": address,
                      "words": {str(a): session.memory_word(a) for a in addresses}}
        if session.grad:
            out["gradient"] = {str(a): session.real(session.memory_word(a, "GM"))
                               for a in addresses}
        return [out]

    def _list(self, args: list[str]) -> list[Event]:
        session = self.session
        source = session.source
        line = source.line_of(session.pc)
        if line is None:
            raise DebugError(f"pc {session.pc} has no source line")
        first = max(1, line - 5)
        lines = {str(n): source.source_text(n) for n in range(first, line + 6)
                 if source.source_text(n) or n <= line}
        return [{"event": "source", "file": source.file, "line": line, "lines": lines,
                 "language": source.language}]

    def _set(self, args: list[str]) -> list[Event]:
        if len(args) == 1 and "=" in args[0]:
            args = args[0].split("=", 1)
        if len(args) == 3 and args[0] == "var":
            args = args[1:]
        if len(args) != 2:
            raise DebugError("set WHAT VALUE (WHAT: $N, [ADDR] or a declared name)")
        self.session.set_value(args[0], args[1])
        return [self.value_event(args[0])]

    def _clear(self, args: list[str]) -> list[Event]:
        if not args:
            raise DebugError("clear ADDR: say which data word to set to 0")
        self.session.set_value(f"[{args[0].strip('[]')}]", "0")
        return [self.value_event(f"[{args[0].strip('[]')}]")]

    # --- the session itself ----------------------------------------------------------------

    def _dir(self, args: list[str]) -> list[Event]:
        if not args:
            self.backward = not self.backward
        elif args[0][:1].lower() in ("f", "r"):
            self.backward = args[0][:1].lower() == "r"
        else:
            raise DebugError("dir f (forward) or dir r (reverse)")
        return [{"event": "direction", "direction": "backward" if self.backward else "forward"}]

    def _restart(self, args: list[str]) -> list[Event]:
        return [self.stop_event(self.session.restart(), "restart")]

    def _run(self, args: list[str]) -> list[Event]:
        self.session.restart()
        return [self.stop_event(self.session.cont(), "run")]

    def _help(self, args: list[str]) -> list[Event]:
        aliases: dict[str, list[str]] = {}
        for alias, name in ALIASES.items():
            aliases.setdefault(name, []).append(alias)
        return [{"event": "help", "commands": HELP, "aliases": aliases}]

    def _quit(self, args: list[str]) -> list[Event]:
        self.done = True
        return []


_MOTIONS = frozenset({"step", "stepi", "next", "finish", "continue"})


#: The most words one ``memory`` command shows (a count is bounded before it is trusted).
MEMORY_WORDS_SHOWN = 65536


def inlined_homes(name: str, variables: Iterable[str]) -> list[str]:
    """The homes of ``name`` in calls the compiler inlined (``NAME__FUNCTION`` then the
    call's line and column, ``compiler/ir/inline_functions.py``): the names a plain
    ``print i`` may mean."""
    pattern = re.compile(re.escape(name) + r"__[A-Za-z_]\w*?\d+_\d+\Z")
    return sorted(v for v in variables if pattern.match(v))


def _count(args: list[str], default: int = 1, limit: int | None = None,
           what: str = "") -> int:
    """The count argument: an integer from 1 to ``limit`` (``what`` says whose limit)."""
    if not args:
        return default
    try:
        count = int(args[0], 0)
    except ValueError:
        raise DebugError(f"{args[0]!r} is not a count") from None
    if count < 1:
        raise DebugError("the count must be at least 1")
    if limit is not None and count > limit:
        raise DebugError(f"the count must be at most {limit} ({what}), not {count}")
    return count


def _instruction(session: Session, pc: int) -> str:
    """The instruction at ``pc`` as the disassembler writes it (``ADD $3 $4``)."""
    cell = session.machine.program.cell(pc)
    return cell.text if cell is not None else f"(pc {pc} is outside the program)"


def fault_event(fault: MachineFault) -> Event:
    """A machine fault as the debugger reports it: the fault's JSON (kind, PC, line, source,
    message), BR, DIR and the multi-line report."""
    return {**fault_json(fault), "br": fault.br, "dir": fault.direction,
            "report": str(fault)}
