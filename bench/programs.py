"""The benchmark programs: a straight-line block and a branchy loop (PAL text)."""
from __future__ import annotations

from revasm.assembler import assemble
from revasm.assembler.image import Image

#: A straight-line body: adds, xors, rotates and subtracts over eight registers;
#: every instruction reads two registers and writes one (like the in-place add
#: it is compared with).
_BODY = [
    "add $1 $2", "xor $3 $1", "sub $4 $3", "add $5 $4", "xor $6 $5", "add $7 $6",
    "sub $8 $7", "add $2 $8", "xor $1 $4", "add $3 $5", "sub $6 $2", "add $8 $1",
]


def straight_line_source(repeats: int = 20) -> str:
    """START, ``12 * repeats`` data instructions, FINISH."""
    lines = [";; pendulum pal file", ".input a $1 int", ".input b $2 int", ".output h $8 int",
             "  start"]
    lines += [f"  {op}" for _ in range(repeats) for op in _BODY]
    lines.append("  finish")
    return "\n".join(lines) + "\n"


def straight_line(width: int = 32, repeats: int = 20) -> Image:
    return assemble(straight_line_source(repeats), "straight_line.pal", width)


#: Branchy: shift-and-add multiplication, one diamond per bit of b (examples/multiply.pal),
#: so lanes with different b take different paths every iteration.
BRANCHY_SOURCE = """;; pendulum pal file
.input  a $1 int
.input  b $2 int
.output c $3 int
        start
        addi  $9 32
loop:   bne   $4 $0 next
        srlvx $5 $2 $4
        andix $6 $5 1
        srlvx $5 $2 $4
        sllvx $7 $1 $4
if:     beq   $6 $0 else
        add   $3 $7
then:   bra   join
else:   beq   $6 $0 if
join:   bne   $6 $0 then
        sllvx $7 $1 $4
        srlvx $5 $2 $4
        andix $6 $5 1
        srlvx $5 $2 $4
        addi  $4 1
next:   bne   $4 $9 loop
        sub   $4 $9
        addi  $9 -32
        finish
"""


def branchy(width: int = 32) -> Image:
    return assemble(BRANCHY_SOURCE, "branchy.pal", width)
