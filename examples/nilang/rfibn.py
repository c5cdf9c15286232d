"""rfibn: the first n with fib(n) >= z, by a while loop around rfib (NiLang paper).

    rfibn(n, z): n += the smallest n with fib(n) >= z  (n must be 0 on entry)

The loop's postcondition ``n != 0`` is false on entry and true after every
iteration, so the loop runs backward too: ~rfibn(n, z) with the answer in n
restores n = 0.  rfibn(0, 100) = 12 (fib(12) = 144).
"""
from revasm.compiler import Int, Out, ancilla, free, reversible, routine


@reversible
def rfib(out: Out[Int], n: Int):
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


@reversible
def rfibn(n: Out[Int], z: Int[1, 200] = 100):
    out = ancilla(0)
    rfib(out, n)
    while (out < z, n != 0):
        ~rfib(out, n)
        n += 1
        rfib(out, n)
    ~rfib(out, n)
    # out == fib(n) was uncomputed by ~rfib: a relation, checked at run time
    free(out, 0, checked=True)
