"""Lowering calls: a portal call (BRA/RBRA) with the caller's registers pushed on the stack.

Arguments that are not in registers (spilled scalars, array elements, constants) are
loaded first; each argument is moved into the callee's parameter register through
its stack slot, and everything is undone after the call returns (docs/abi.md).  A
mixin of the function lowering (``compiler/backend/function_lowering.py``).
"""
from __future__ import annotations

from ..errors import CompileError, SourcePos
from ..ir import nodes as ir
from .code import Instr, inverse_code, with_role
from .layout import LINK, SP
from .lowering_state import FunctionLoweringState


class CallLowering(FunctionLoweringState):
    """Calls and uncalls of reversible functions."""

    def stmt_call(self, s: ir.Call) -> list[Instr]:
        callee = self.p.layouts[s.func]
        pos = s.pos
        saved_role, self.role = self.role, "call"
        try:
            loads: list[Instr] = []
            loaded: dict[int, int] = {}  # argument index -> scratch register
            for k, arg in enumerate(s.args):
                if isinstance(arg, ir.Index) or (isinstance(arg, ir.Var)
                                                 and arg.name in self.lay.scalars
                                                 and self.lay.scalars[arg.name].register is None):
                    reg, setup, _ = self.place(arg)
                    loads += setup
                    loaded[k] = reg
                elif isinstance(arg, ir.Const):
                    reg = self.fresh(pos)
                    param = self.p.module.functions[s.func].params[k]
                    if not isinstance(param.type, ir.ScalarType):  # checks.py rejects it first
                        raise CompileError(arg.pos, f"parameter {param.name!r} of {s.func} is "
                                                    f"an array ({param.type}); a constant is not")
                    loads += self.accumulate(reg, 1, arg, param.type)
                    loaded[k] = reg
            own = self.lay.registers
            pushed = own + [LINK] + [loaded[k] for k in sorted(loaded)]
            n = len(pushed)
            frame = self.lay.frame_size
            enter: list[Instr] = []
            if frame:
                enter.append(self.i("ADDI", SP, str(frame), pos=pos, note="skip the frame"))
            for reg in pushed:
                enter.append(self.i("EXCH", reg, SP, pos=pos, note="push"))
                enter.append(self.i("ADDI", SP, "1", pos=pos))
            for k, arg in enumerate(s.args):
                target = callee.param_register(k)
                if k in loaded:
                    enter += self._move_from_slot(target, n - pushed.index(loaded[k]), pos)
                    continue
                # not loaded: a scalar in a register, an array or a table, named by a Var
                assert isinstance(arg, ir.Var)
                name = arg.name
                if name in self.lay.arrays:
                    home = self.lay.arrays[name]
                    if home.register is not None:
                        enter += self._move_from_slot(target, n - pushed.index(home.register),
                                                      pos)
                    else:
                        assert home.frame_offset is not None  # a local array: in the frame
                        enter.append(self.i("ADD", target, SP, pos=pos,
                                            note=f"address of {name}"))
                        enter.append(self.i("ADDI", target, str(-(frame + n - home.frame_offset)),
                                            pos=pos))
                elif name in self.p.module.tables:
                    enter.append(self.i("LI", target, f"t_{name}.0", pos=pos))
                else:
                    slot = self.lay.scalars[name]
                    assert slot.register is not None  # a spilled scalar was loaded above
                    enter += self._move_from_slot(target, n - pushed.index(slot.register), pos)
            jump = self.i("RBRA" if s.uncall else "BRA", f"f_{s.func}", pos=pos, role="control",
                          note=("uncall " if s.uncall else "call ") + s.func)
            leave = with_role(inverse_code(enter), "call")
            unloads = with_role(inverse_code(loads), "call")
            return loads + enter + [jump] + leave + unloads
        finally:
            self.role = saved_role

    def _move_from_slot(self, target: int, distance: int, pos: SourcePos) -> list[Instr]:
        return [self.i("ADDI", SP, str(-distance), pos=pos),
                self.i("EXCH", target, SP, pos=pos, note="pass an argument"),
                self.i("ADDI", SP, str(distance), pos=pos)]
