"""dot and norm2: the NiLang paper's first examples (idot, inorm2).

    dot(out, x, y):  out += sum_i x[i] * y[i]
    norm2(out, x):   out += sum_i x[i]^2
"""
from revasm.compiler import Array, Fixed, Out, reversible, sq

N = 4


@reversible
def dot(out: Out, x: Array[Fixed, N], y: Array[Fixed, N]):
    for i in range(N):
        out += x[i] * y[i]


@reversible
def norm2(out: Out, x: Array[Fixed, N]):
    for i in range(N):
        out += sq(x[i])
