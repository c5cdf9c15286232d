"""A Debug Adapter Protocol server: the reversible debugger for VS Code and other editors.

The protocol (https://microsoft.github.io/debug-adapter-protocol/specification): messages
framed by a ``Content-Length`` header, requests answered by responses, events sent when
the machine stops.  The adapter says ``supportsStepBack``, so an editor shows *step back*
and *reverse continue*; both run the machine backward (no trace is kept).  One thread
(the machine); stack frames are the portal calls in progress; scopes are the registers,
the declared names (and Python variables of compiled programs), the gradient bank in
gradient mode, and the control state.  Reaching the end of the program is a stop, not
the end of the session: one can step back from there; ``terminated`` comes with
``disconnect`` (or ``terminate``).

:func:`serve` speaks on a pair of streams (``revasm dap``: stdin/stdout);
:func:`serve_tcp` listens on a localhost port and serves each connection as its own
session (``revasm dap --port N``, VS Code's ``debugServer``).
"""
from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable
from typing import IO, Any

from revasm.assembler.image import DeclaredName
from revasm.machine import MachineFault
from revasm.machine.values import FIXED, INT, RAW_PREFIX, WORD, kind_of

from .breakpoints import DebugError, parse_address, resolve_name
from .commands import Interpreter
from .session import Session, Stop

THREAD_ID = 1
#: scope kinds: a variablesReference is ``frame * SCOPE_KINDS + kind + 1``
SCOPES = ("Registers", "Names", "Gradient", "Machine")

Loader = Callable[[dict], Session]

#: How values are shown (launch's ``"display"``; a request's ``format: {"hex": true}`` asks
#: for ``hex``): ``values`` reads each word as its place is declared (machine/values.py: a
#: fixed name a real, an int name an integer, a register or word with no name a signed
#: word), ``words`` every word as a signed integer, ``hex`` every word's W bits in hex.
DISPLAYS = ("values", "words")


#: Bounds on what a client sends, checked before it is trusted: a header line's bytes,
#: the header lines of one message, a body's bytes (the largest request an editor sends
#: is a few kilobytes) and the nesting of its JSON.
MAX_HEADER_LINE = 1024
MAX_HEADER_LINES = 32
MAX_BODY = 16 * 1024 * 1024
MAX_NESTING = 64


class BadMessage(ValueError):
    """A message the adapter cannot read; the server reports it and reads on."""


def read_message(stream: IO[bytes]) -> dict | None:
    """One framed message, or None at the end of the stream; raises :class:`BadMessage`
    (after consuming what it read) for a malformed one."""
    length = None
    problem = ""
    for _ in range(MAX_HEADER_LINES + 1):
        line = stream.readline(MAX_HEADER_LINE + 1)
        if not line:
            return None
        if len(line) > MAX_HEADER_LINE and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # skip the rest of the long line
                line = stream.readline(MAX_HEADER_LINE + 1)
            problem = problem or f"a header line longer than {MAX_HEADER_LINE} bytes"
            continue
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            text = value.strip()
            if not text.isdigit() or not 0 <= int(text) <= MAX_BODY:
                problem = problem or (f"Content-Length {text[:40]!r} is not a length from 0 "
                                      f"to {MAX_BODY}")
            else:
                length = int(text)
    else:
        raise BadMessage(f"more than {MAX_HEADER_LINES} header lines")
    if problem:
        raise BadMessage(problem)
    if length is None:
        raise BadMessage("a message without Content-Length")
    body = stream.read(length)
    if len(body) < length:
        raise BadMessage(f"the stream ended {length - len(body)} bytes into a message body")
    try:
        text_body = body.decode("utf-8")
        if _nesting(text_body) > MAX_NESTING:
            raise BadMessage(f"JSON nested deeper than {MAX_NESTING} levels")
        message = json.loads(text_body)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise BadMessage(f"the body is not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise BadMessage("a message that is not a JSON object")
    return message


def _nesting(text: str) -> int:
    """An upper bound of the JSON text's nesting depth (brackets inside strings count too)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def write_message(stream: IO[bytes], message: dict) -> None:
    body = json.dumps(message).encode("utf-8")
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


class Adapter:
    """Answers one client's requests; ``send`` writes a message to it."""

    def __init__(self, send: Callable[[dict], None], loader: Loader) -> None:
        self._send = send
        self._loader = loader
        self._seq = 0
        self.session: Session | None = None
        self.interpreter: Interpreter | None = None
        self.lines_start_at_1 = True
        self.stop_on_entry = False
        self.display = "values"
        self.done = False
        #: breakpoint numbers of the session set through setBreakpoints, by source path
        self._source_breakpoints: dict[str, list[int]] = {}

    # --- messages -----------------------------------------------------------------------------

    def _message(self, kind: str, **fields: Any) -> None:
        self._seq += 1
        self._send({"seq": self._seq, "type": kind, **fields})

    def event(self, name: str, body: dict | None = None) -> None:
        self._message("event", event=name, **({"body": body} if body is not None else {}))

    def handle(self, request: dict) -> None:
        """Answer one request (an unknown or failing one gets ``success: false``)."""
        command = request.get("command", "")
        arguments = request.get("arguments") or {}
        handler = getattr(self, "_on_" + command.replace("-", "_"), None) \
            if isinstance(command, str) else None
        after: list[Callable[[], None]] = []
        try:
            if handler is None:
                raise DebugError(f"revasm dap does not support the request {command!r}")
            if not isinstance(arguments, dict):
                raise DebugError(f"the arguments of {command!r} are not an object")
            body = handler(arguments, after)
        except (DebugError, MachineFault) as exc:
            self._fail(request, command, str(exc))
            return
        except (TypeError, ValueError, KeyError, AttributeError) as exc:  # ill-typed arguments
            self._fail(request, command, f"bad arguments for {command!r}: {exc}")
            return
        except Exception as exc:  # a bug in revasm: the editor's session goes on
            self._fail(request, command, f"revasm dap: internal error: {type(exc).__name__}: "
                                         f"{exc}; please report it with the request")
            return
        try:
            json.dumps(body)
        except (TypeError, ValueError, RecursionError) as exc:  # never a half-written answer
            self._fail(request, command, f"revasm dap: internal error: an answer that is not "
                                         f"JSON ({exc}); please report it with the request")
            return
        self._message("response", request_seq=_seq_of(request), success=True,
                      command=command, **({"body": body} if body is not None else {}))
        for action in after:  # events that follow the response (stopped, initialized, ...)
            try:
                action()
            except Exception as exc:  # the response is sent: say what failed after it
                self.event("output", {"category": "stderr",
                                      "output": f"revasm dap: {command!r}: {type(exc).__name__}:"
                                                f" {exc}\n"})

    def _fail(self, request: dict, command: str, message: str) -> None:
        self._message("response", request_seq=_seq_of(request), success=False,
                      command=str(command), message=message)

    # --- life cycle -------------------------------------------------------------------------

    def _on_initialize(self, arguments: dict, after: list) -> dict:
        self.lines_start_at_1 = arguments.get("linesStartAt1", True) is not False
        after.append(lambda: self.event("initialized"))
        return {"supportsConfigurationDoneRequest": True, "supportsStepBack": True,
                "supportsEvaluateForHovers": True, "supportsTerminateRequest": True,
                "supportsFunctionBreakpoints": True, "supportsRestartRequest": False,
                "supportsSetVariable": True, "supportsValueFormattingOptions": True,
                "exceptionBreakpointFilters": []}

    def _on_launch(self, arguments: dict, after: list) -> None:
        display = arguments.get("display", "values")
        if display not in DISPLAYS:
            raise DebugError(f'"display" is "values" (fixed names as reals) or "words" '
                             f"(raw words), not {str(display)[:40]!r}")
        self.session = self._loader(arguments)
        self.interpreter = Interpreter(self.session)
        self.display = display
        self.stop_on_entry = bool(arguments.get("stopOnEntry"))
        mode = ", gradient mode (--grad)" if self.session.grad else ""
        after.append(lambda: self.event("output", {
            "category": "console",
            "output": f"revasm dap: {arguments['program']} (W = {self.session.image.width}"
                      f"{mode})\n"}))

    def _on_configurationDone(self, arguments: dict, after: list) -> None:
        session = self._need_session()
        if self.stop_on_entry:
            after.append(lambda: self._stopped(Stop("entry"), "entry"))
        else:
            after.append(lambda: self._stopped(session.cont()))

    def _on_disconnect(self, arguments: dict, after: list) -> None:
        self.done = True
        after.append(lambda: self.event("terminated"))

    def _on_terminate(self, arguments: dict, after: list) -> None:
        self.done = True
        after.append(lambda: self.event("terminated"))

    def _need_session(self) -> Session:
        if self.session is None:
            raise DebugError("launch a program first")
        return self.session

    # --- breakpoints --------------------------------------------------------------------------

    def _on_setBreakpoints(self, arguments: dict, after: list) -> dict:
        path = (arguments.get("source") or {}).get("path") or ""
        lines = [self._line_in(requested.get("line", 0))
                 for requested in arguments.get("breakpoints") or []]
        return self._replace_breakpoints(path, [(f"{os.path.basename(path)}:{line}",
                                                 {"line": self._line_out(line)})
                                                for line in lines])

    def _on_setFunctionBreakpoints(self, arguments: dict, after: list) -> dict:
        """Function breakpoints are labels (a compiled function's is ``f_NAME``)."""
        source = self._need_session().source
        names = [str(requested.get("name", "")) for requested in arguments.get("breakpoints")
                 or []]
        return self._replace_breakpoints("<labels>", [
            (f"f_{name}" if source.program is not None and source.code_label(name) is None
             else name, {}) for name in names])

    def _replace_breakpoints(self, key: str, specs: list[tuple[str, dict]]) -> dict:
        """The breakpoints one request sets for ``key`` (a source, or the labels) replace
        those it set before; each answer is verified, or says why not."""
        session = self._need_session()
        for number in self._source_breakpoints.pop(key, []):
            session.breakpoints.pop(number, None)
        numbers: list[int] = []
        answers = []
        for spec, unverified in specs:
            try:
                point = session.add_breakpoint(spec)
            except DebugError as exc:
                answers.append({"verified": False, **unverified, "message": str(exc)})
                continue
            numbers.append(point.number)
            answers.append({"id": point.number, "verified": True,
                            "line": self._line_out(point.line or 1)})
        self._source_breakpoints[key] = numbers
        return {"breakpoints": answers}

    def _on_setExceptionBreakpoints(self, arguments: dict, after: list) -> dict:
        """A machine fault always stops the session; there are no filters to set."""
        return {"breakpoints": []}

    # --- motion -------------------------------------------------------------------------------

    def _motion(self, after: list, move: Callable[[Session], Stop]) -> dict:
        session = self._need_session()
        stop = move(session)
        after.append(lambda: self._stopped(stop))
        return {"allThreadsContinued": True}

    def _on_continue(self, arguments: dict, after: list) -> dict:
        return self._motion(after, lambda s: s.cont())

    def _on_reverseContinue(self, arguments: dict, after: list) -> dict:
        return self._motion(after, lambda s: s.cont(backward=True))

    def _on_next(self, arguments: dict, after: list) -> dict:
        return self._motion(after, lambda s: s.step_line(over=True))

    def _on_stepIn(self, arguments: dict, after: list) -> dict:
        return self._motion(after, lambda s: s.step_line())

    def _on_stepOut(self, arguments: dict, after: list) -> dict:
        return self._motion(after, lambda s: s.finish())

    def _on_stepBack(self, arguments: dict, after: list) -> dict:
        return self._motion(after, lambda s: s.step_line(backward=True, over=True))

    def _on_pause(self, arguments: dict, after: list) -> None:
        self._need_session()
        after.append(lambda: self._stopped(Stop("pause"), "pause"))

    def _stopped(self, stop: Stop, reason: str | None = None) -> None:
        dap_reason = reason or {"breakpoint": "breakpoint", "watchpoint": "data breakpoint",
                                "fault": "exception", "end": "end", "beginning": "beginning",
                                "switch": "gradient switch", "limit": "pause",
                                "interrupted": "pause"
                                }.get(stop.reason, "step")
        assert self.interpreter is not None
        described = self.interpreter.stop_event(stop, dap_reason) \
            if reason is None else self.interpreter.where_event("stopped")
        body: dict[str, Any] = {"reason": dap_reason, "threadId": THREAD_ID,
                                "allThreadsStopped": True}
        if stop.breakpoint is not None:
            body["hitBreakpointIds"] = [stop.breakpoint.number]
        texts = {"end": "the end of the program: step back to go back",
                 "beginning": "back at START", "fault": "machine fault"}
        if stop.reason in texts:
            body["description"] = texts[stop.reason]
        if "message" in described:
            body["text"] = described["message"]
        if stop.fault is not None:
            body["text"] = stop.fault.kind
            self.event("output", {"category": "stderr", "output": str(stop.fault) + "\n"})
        self.event("stopped", body)

    # --- state ------------------------------------------------------------------------------

    def _on_threads(self, arguments: dict, after: list) -> dict:
        return {"threads": [{"id": THREAD_ID, "name": "machine"}]}

    def _on_stackTrace(self, arguments: dict, after: list) -> dict:
        session = self._need_session()
        assert self.interpreter is not None
        frames = self.interpreter.frames_event()["frames"]
        source = session.source
        path = os.path.abspath(source.file)
        out = []
        for index, frame in enumerate(frames):
            out.append({"id": index, "name": f"{frame['function']} (pc {frame['pc']})",
                        "source": {"name": os.path.basename(path), "path": path},
                        "line": self._line_out(frame["line"] or 1), "column": 1,
                        "instructionPointerReference": str(frame["pc"])})
        start = int(arguments.get("startFrame") or 0)
        levels = int(arguments.get("levels") or 0)
        shown = out[start:start + levels] if levels else out[start:]
        return {"stackFrames": shown, "totalFrames": len(out)}

    def _frame(self, frame: int) -> int:
        """``frame`` if the stack (``stackTrace``) has it, else a failed request: a frame
        or a variables reference made up or kept from an earlier stop is never answered
        as if it named something."""
        assert self.interpreter is not None
        frames = len(self.interpreter.frames_event()["frames"])
        if not 0 <= frame < frames:
            raise DebugError(f"no frame {frame}: the stack has {frames} (ids 0 to "
                             f"{frames - 1}, as stackTrace gives them)")
        return frame

    def _scope(self, arguments: dict) -> tuple[int, str]:
        """The frame and scope a request's ``variablesReference`` names (as ``scopes``
        gave it), or a failed request."""
        session = self._need_session()
        assert self.interpreter is not None
        reference = int(arguments.get("variablesReference", 0)) - 1
        frame, kind = divmod(reference, len(SCOPES))
        frames = len(self.interpreter.frames_event()["frames"])
        if reference < 0 or frame >= frames or \
                (SCOPES[kind] == "Gradient" and not session.grad):
            raise DebugError(f"no such variables reference: "
                             f"{arguments.get('variablesReference')!r} (use one that scopes "
                             "gave since the last stop)")
        return frame, SCOPES[kind]

    def _on_scopes(self, arguments: dict, after: list) -> dict:
        session = self._need_session()
        frame = self._frame(int(arguments.get("frameId", 0)))
        scopes = []
        for kind, name in enumerate(SCOPES):
            if name == "Gradient" and not session.grad:
                continue
            scopes.append({"name": name, "variablesReference": frame * len(SCOPES) + kind + 1,
                           "expensive": False})
        return {"scopes": scopes}

    def _on_variables(self, arguments: dict, after: list) -> dict:
        frame, scope = self._scope(arguments)
        shown = self._variables(scope, frame, self._mode(arguments))
        return {"variables": [{"name": name, "value": value, "type": kind_text,
                               "variablesReference": 0}
                              for name, (value, kind_text) in shown.items()]}

    def _mode(self, arguments: dict) -> str:
        """``hex`` when the request asks (DAP ``format: {"hex": true}``), else the launch's
        display."""
        value_format = arguments.get("format")
        if isinstance(value_format, dict) and value_format.get("hex") is True:
            return "hex"
        return self.display

    def _show(self, word: int, kind: str, mode: str) -> str:
        """A W-bit word as ``mode`` shows it at a place of ``kind`` (``int``, ``fixed``,
        ``word``): the value rule's reading in ``values`` mode, else the word."""
        fmt = self._need_session().fmt
        word &= fmt.mask
        if mode == "hex":
            return f"0x{word:0{fmt.width // 4}x}"
        if mode == "values" and kind == FIXED:
            return repr(fmt.to_real(word))
        return str(fmt.signed(word))

    def _home(self, register: int) -> DeclaredName | None:
        """The declared name whose home is the register, if any."""
        return next((d for d in self._need_session().image.names.values()
                     if d.register == register), None)

    def _variables(self, scope: str, frame: int, mode: str) -> dict[str, tuple[str, str]]:
        """A scope's variables: name -> (the value as shown, its kind)."""
        session = self._need_session()
        show = self._show
        out: dict[str, tuple[str, str]] = {}
        if scope == "Registers":
            for index, word in enumerate(session.machine.registers):
                if not index:
                    continue
                home = self._home(index)
                kind = kind_of(home.fixed) if home is not None and mode == "values" else WORD
                if home is not None and kind != WORD:
                    kind_text = f"{kind} {home.name}"
                else:  # a word: its reading as a real, for a register that holds one
                    kind_text = f"{WORD} (as a real: {show(word, FIXED, 'values')})" \
                        if word else WORD
                out[f"${index}"] = (show(word, kind, mode), kind_text)
        elif scope == "Names":
            words = dict(session.named_words())
            if frame == 0:
                words.update(session.python_words())
            for name, (word, fixed) in words.items():
                kind = kind_of(fixed)
                out[name] = (show(word, kind, mode), kind)
            if frame and session.source.program is not None:
                out.update({name: (str(value), "") for name, value in self._python(frame).items()})
        elif scope == "Gradient":  # adjoints are reals whatever their name's kind
            adjoints = {f"d{name}": word
                        for name, (word, _) in session.named_words("G").items()}
            if frame == 0:
                adjoints.update({f"d{name}": word
                                 for name, (word, _) in session.python_words("G").items()})
            adjoints.update({f"G[${i}]": word for i, word in
                             enumerate(session.machine.bank("G")) if word})
            out = {name: (show(word, FIXED, mode), FIXED) for name, word in adjoints.items()}
        else:
            machine = session.machine
            values = {"PC": machine.pc, "BR": machine.br, "DIR": machine.direction,
                      "time": session.time, "pass": session.phase,
                      "gradient mode": machine.gradient, "output": session.output()}
            out = {name: (_text(value), "") for name, value in values.items()}
        return out

    def _on_setVariable(self, arguments: dict, after: list) -> dict:
        """Store a register's or a declared name's value by the one rule of
        machine/values.py, read as the Variables view shows it: a register that is a
        declared name's home, as that name (a fixed name takes a real); in ``words``
        display a name takes its raw word (``raw:``).  Other scopes are read-only."""
        session = self._need_session()
        name, value = arguments.get("name"), arguments.get("value")
        if not isinstance(name, str) or not isinstance(value, str):
            raise DebugError('setVariable needs "name" and "value" strings')
        frame, scope = self._scope(arguments)
        if scope not in ("Registers", "Names"):
            raise DebugError("only registers and declared names can be set")
        mode = self._mode(arguments)
        place = name
        if scope == "Registers":
            register = resolve_name(session.image, name).register
            home = self._home(register) if register is not None else None
            if home is not None and mode == "values":
                place = home.name
        elif mode != "values" and not value.strip().lower().startswith(RAW_PREFIX):
            value = RAW_PREFIX + value.strip()  # a name shown as its word takes a word
        session.set_value(place, value)
        shown = self._variables(scope, frame, mode)
        if name not in shown:
            raise DebugError(f"{name!r} is not in {scope}")
        return {"value": shown[name][0], "type": shown[name][1]}

    def _python(self, frame: int, bank: str = "") -> dict[str, Any]:
        """A compiled function's variables: the innermost frame's; an outer frame's are
        saved on the stack while the inner call runs, which the frame says instead."""
        session = self._need_session()
        if session.source.program is None:
            return {}
        if frame == 0:
            return session.python_variables(bank)
        return {"(variables)": "saved on the stack during the inner call (docs/abi.md): "
                               "step out to see them"}

    def _on_evaluate(self, arguments: dict, after: list) -> dict:
        """A value by name, as ``print`` finds it; ``raw:NAME`` (the value rule's prefix
        for a raw word) shows the word, ``format: {"hex": true}`` its bits in hex."""
        self._need_session()
        assert self.interpreter is not None
        expression = str(arguments.get("expression", "")).strip()
        mode = self._mode(arguments)
        if expression.lower().startswith(RAW_PREFIX):
            expression = expression[len(RAW_PREFIX):].strip()
            mode = "hex" if mode == "hex" else "words"
        event = self.interpreter.value_event(expression)  # checks the name, as print does
        place = self._place(expression)
        if place is None:  # PC, BR, DIR: numbers, not words
            value = event["value"]
            return {"result": f"0x{value:x}" if mode == "hex" else _text(value),
                    "variablesReference": 0}
        word, kind, name, gradient = place
        text = self._show(word, kind, mode)
        signed = self._need_session().fmt.signed(word)
        if mode == "values" and name is not None and name != expression:
            text += f" ({name}; word {signed})" if kind == FIXED else f" ({name})"
        elif mode == "values" and kind == WORD and word:
            text += f" (as a real: {self._show(word, FIXED, mode)})"
        if gradient is not None:
            text += f" (gradient {self._show(gradient, FIXED, mode)})"
        return {"result": text, "type": kind, "variablesReference": 0}

    def _place(self, what: str) -> tuple[int, str, str | None, int | None] | None:
        """The place ``evaluate`` names: (its word, its kind, the declared name there, the
        gradient's word in gradient mode), or None for PC, BR and DIR."""
        session = self._need_session()
        mask = session.fmt.mask
        if what.upper() in ("PC", "BR", "DIR"):
            return None
        gradient: int | None = None
        if what.startswith("[") and what.endswith("]"):
            address = parse_address(what[1:-1], session.source)
            declared = next((d for d in session.image.names.values() if d.address == address),
                            None)
            if session.grad:
                gradient = session.memory_word(address, "GM") & mask
            return (session.memory_word(address) & mask,
                    WORD if declared is None else kind_of(declared.fixed),
                    None if declared is None else declared.name, gradient)
        for words, bank in ((session.python_words, "G"), (session.named_words, "G")):
            found = words()
            if what in found:
                word, fixed = found[what]
                if session.grad:
                    gradient = words(bank)[what][0]
                return word, FIXED if fixed else INT, what, gradient
        register = resolve_name(session.image, what).register
        assert register is not None
        home = self._home(register)
        if session.grad:
            gradient = session.machine.bank("G")[register] & mask
        return (session.machine.registers[register] & mask,
                WORD if home is None else kind_of(home.fixed),
                None if home is None else home.name, gradient)

    # --- lines ---------------------------------------------------------------------------------

    def _line_in(self, line: int) -> int:
        return int(line) if self.lines_start_at_1 else int(line) + 1

    def _line_out(self, line: int) -> int:
        return line if self.lines_start_at_1 else line - 1


def _seq_of(request: dict) -> int:
    """The request's ``seq`` to answer (0 when it has none that is an integer)."""
    seq = request.get("seq", 0)
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else 0


def _text(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def serve(reader: IO[bytes], writer: IO[bytes], loader: Loader) -> None:
    """Answer requests from ``reader`` on ``writer`` until ``disconnect`` or end of input."""
    serve_adapter(Adapter(lambda message: write_message(writer, message), loader), reader)


def serve_adapter(adapter: Adapter, reader: IO[bytes]) -> None:
    """Feed ``adapter`` the requests read from ``reader`` until ``disconnect`` or end of
    input; unreadable messages and other messages than requests are reported, not fatal."""
    while not adapter.done:
        try:
            message = read_message(reader)
        except BadMessage as exc:
            adapter.event("output", {"category": "stderr",
                                     "output": f"revasm dap: unreadable message: {exc}\n"})
            continue
        if message is None:
            break
        if message.get("type") == "request":
            adapter.handle(message)
        else:
            adapter.event("output", {"category": "stderr",
                                     "output": "revasm dap: ignored a message that is not a "
                                               f"request (type {message.get('type')!r})\n"})


#: The address ``revasm dap --port`` listens on: this machine only (the adapter reads and
#: runs any file the client names, so it is never offered to the network).
LOCALHOST = "127.0.0.1"


class TcpServer:
    """DAP over TCP on localhost: each accepted connection is one debug session (its own
    :class:`Adapter` and machine) served on a thread of its own until ``disconnect`` or the
    client closes it; the server goes on listening for the next one until :meth:`close`."""

    def __init__(self, port: int, loader: Loader, host: str = LOCALHOST) -> None:
        self._loader = loader
        self._listener = socket.create_server((host, port))
        self._listener.settimeout(0.2)  # accept() wakes to see close()
        self.host: str = self._listener.getsockname()[0]
        self.port: int = self._listener.getsockname()[1]
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._adapters: set[Adapter] = set()
        self._threads: list[threading.Thread] = []
        #: sessions served so far (ended or not): for the logs and the tests
        self.sessions = 0

    def serve_forever(self) -> None:
        """Accept connections until :meth:`close` (from another thread or a signal)."""
        while not self._closed.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:  # the listener was closed
                break
            connection.settimeout(None)
            with self._lock:
                if self._closed.is_set():
                    connection.close()
                    break
                self._connections.add(connection)
                self.sessions += 1
            thread = threading.Thread(target=self._session, args=(connection,),
                                      name=f"revasm-dap-{self.sessions}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def _session(self, connection: socket.socket) -> None:
        reader = connection.makefile("rb")
        writer = connection.makefile("wb")
        adapter = Adapter(lambda message: write_message(writer, message), self._loader)
        with self._lock:
            self._adapters.add(adapter)
        try:
            serve_adapter(adapter, reader)
        except (OSError, ValueError):  # the client went away (reset, broken pipe, closed)
            pass
        finally:
            with self._lock:
                self._connections.discard(connection)
                self._adapters.discard(adapter)
            for stream in (reader, writer):
                try:
                    stream.close()
                except OSError:
                    pass
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            connection.close()

    @property
    def live_sessions(self) -> int:
        """The sessions whose threads still run."""
        return sum(thread.is_alive() for thread in self._threads)

    def close(self, timeout: float = 5.0) -> None:
        """Stop listening, end the sessions in progress (a motion command that is running
        stops between two instructions; the connections are shut down) and wait up to
        ``timeout`` seconds for each session's thread."""
        self._closed.set()
        self._listener.close()
        with self._lock:
            open_connections = list(self._connections)
            for adapter in self._adapters:  # a motion in progress stops between two steps
                if adapter.session is not None:
                    adapter.session.interrupt_requested = True
        for connection in open_connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in self._threads:
            thread.join(timeout)


def serve_tcp(port: int, loader: Loader, *, host: str = LOCALHOST,
              ready: Callable[[int], None] | None = None) -> None:
    """Serve DAP on ``host:port`` (port 0: a free one, told to ``ready``) until interrupted
    (Ctrl-C or SIGTERM), then close every session; an OSError if it cannot listen."""
    server = TcpServer(port, loader, host)
    if ready is not None:
        ready(server.port)
    try:
        server.serve_forever()
    finally:
        server.close()
