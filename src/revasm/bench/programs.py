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


#: A long run in the shape of compiled PAL with its stack at the top of the address space
#: (``long_stack_run``): a recursive procedure on a downward stack from address 0, called
#: K times, SHOW after each call.
STACK_SUM_SOURCE = """;; pendulum pal file
;; A long run in the shape of compiled PAL (Frank's R compiler): SP ($1) starts at 0 and
;; the stack grows downward from the top of the address space.  K times, a recursive
;; procedure adds depth + (depth - 1) + ... + 0 to acc, saving one return offset per level
;; on the stack (2^32 - 1 down to 2^32 - depth - 1), and SHOW prints acc.
;; With k = 3, depth = 4 the output is 10 20 30.
;; Steps: 6 + K * (16 * depth + 20): K = 62500, depth = 100 -> 101 250 006.
;; acc = K * depth * (depth + 1) / 2.
.input  k     $20 int = 62500
.input  depth $21 int = 100
.output acc   $3 int
        start
loop:   bne    $6 $0 next       ; from i = 0
        add    $2 $21           ; n = depth
        bra    tri              ; acc += tri(n)
        sub    $2 $21           ; n = 0 again
        show   $3
        addi   $6 1
next:   bne    $6 $20 loop      ; until i = k
        addi   $1 -1            ; push acc at the top of memory, the stack left as found
        exch   $3 $1
        exch   $3 $1            ; pop it again
        addi   $1 1
        finish
tri_top: bra   tri_bot          ; the portal's partner, on the way out
tri:    swapbr $31              ; $31 = the caller's offset, BR = 0
        neg    $31
        addi   $1 -1            ; push the return offset (downward from 0)
        exch   $31 $1
if_top: beq    $2 $0 if_bot     ; if n != 0
        addi   $2 -1
        bra    tri              ;   tri(n - 1)
        addi   $2 1
if_bot: beq    $2 $0 if_top     ; fi n != 0
        add    $3 $2            ; acc += n
        exch   $31 $1           ; pop the return offset
        addi   $1 1
tri_bot: bra   tri_top
"""


def stack_sum_steps(k: int, depth: int) -> int:
    """The instructions of a forward run of :data:`STACK_SUM_SOURCE` (worked out by hand:
    a loop iteration takes 8 + 16 per level + 12 for the last; START, FINISH, 4 more)."""
    return 6 + k * (16 * depth + 20)

