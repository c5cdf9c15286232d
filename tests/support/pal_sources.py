"""PAL sources shared by several test files, and the PAL conformance suite's folder."""
from pathlib import Path

#: The PAL conformance suite: programs with their expected results (``; expect`` lines).
CONFORMANCE = Path(__file__).resolve().parent / "pal_conformance"

# PendVM's fib.pisa, instruction for instruction: a lower-case PAL file with
# a label on the loop lines, a label used as an immediate and negated, and a
# DATA cell after FINISH.
FIB_PISA = """\
;; pendulum pal file
;; iterative fibonacci, as in PendVM's fib.pisa
start
        addi $2 1         ; b = 1
        addi $4 n_value   ; address of the DATA cell
        exch $5 $4        ; $5 = N, cell = 0
looptop: bne $3 $0 loopbot
         add  $2 $1
         xor  $1 $2
         xor  $2 $1
         xor  $1 $2
         addi $3 1
loopbot: bne $3 $5 looptop
        add  $6 $1
        exch $5 $4
        addi $4 -n_value
finish
n_value: data 18
"""

# A loop that shows, swaps, exchanges and emits: every kind of waveform event
# (tests of `revasm run --vcd` and of the RTL's waveforms).
BUSY = """;; pendulum pal file
.input n $5 int = 3
        start
        addi   $1 7
        addi   $2 -2
top:    bne    $6 $0 bot        ; from i = 0
        swap   $1 $2            ; a second register write (WRITEB)
        show   $1
        addi   $6 1
bot:    bne    $6 $5 top        ; until i = n
        addi   $3 200
        exch   $1 $3            ; [200] = the last $1
        emit   $2
        finish
"""
