"""PAL sources shared by several test files."""

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
