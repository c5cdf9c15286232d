"""rfib: Fibonacci by reversible recursion (NiLang paper, Listing 2).

    rfib(out, n): out += fib(n), with fib(1) = fib(2) = 1.

The recursion computes n1 = n - 1 and n2 = n - 2 in a routine, recurses on
them, and uncomputes them (compute - copy - uncompute).  rfib(10) = 55.
"""
from revasm.compiler import Int, Out, ancilla, reversible, routine


@reversible
def rfib(out: Out[Int], n: Int[1, 16] = 10):
    with routine():
        n1 = ancilla(0)
        n2 = ancilla(0)
        n1 += n - 1
        n2 += n - 2
    if n <= 2:
        out += 1
    else:
        rfib(out, n1)
        rfib(out, n2)
    ~routine
