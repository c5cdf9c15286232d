"""The Frobenius dot product of two sparse matrices, with NiLang's branch_keeper.

    r += sum_ij A[i, j] * B[i, j]     (A, B in compressed sparse column form)

Per column, the two sorted row lists are merged: each step moves one
pointer, a or b, decided by comparing the rows it points at.  The step's
``if`` changes the very pointers its decision reads, so the decision bit is
kept in ``keeper[step]`` (the branch keeper) and the ``if`` tests the kept
bit, which the branch does not change.  After the merge, the inverse of the
merge (without the products) walks the pointers back and clears every kept
bit: compute (merge + products), uncompute (the merge alone).

Each rowval array has a sentinel slot at the end, so that looking one past
the last entry stays inside the array; the ``done`` flags ignore it.

The defaults are two 4 x 4 matrices; the sparsity pattern (colptr, rowval) is
``exactly`` its default -- random checks vary the values only, since a random
pattern is not a valid compressed column form.
"""
from revasm.compiler import (
    Array,
    Fixed,
    Int,
    Out,
    ancilla,
    exactly,
    free,
    inverse,
    reversible,
    routine,
)

ROWS = 4
COLS = 4
NNZ_A = 6
NNZ_B = 7
A_COLPTR = (0, 2, 3, 4, 6)
A_ROWVAL = (0, 2, 1, 3, 0, 2, 4)  # the last slot is the sentinel row, ROWS
A_NZVAL = (1.5, -0.5, 2.0, 0.25, 1.0, 3.0)
B_COLPTR = (0, 3, 4, 6, 7)
B_ROWVAL = (0, 1, 2, 1, 0, 3, 2, 4)
B_NZVAL = (2.0, 1.0, 4.0, -1.5, 2.0, 8.0, 0.5)


@reversible
def product(r: Fixed, ia: Int, ib: Int, ia2: Int, ib2: Int, a_rowval: Array[Int, NNZ_A + 1],
            a_nzval: Array[Fixed, NNZ_A], b_rowval: Array[Int, NNZ_B + 1],
            b_nzval: Array[Fixed, NNZ_B]):
    """r += A[ra] * B[rb] when both pointers are inside their column and on the same row."""
    with routine():
        same = ancilla(0)
        same ^= (a_rowval[ia] == b_rowval[ib]) and (ia != ia2) and (ib != ib2)
    if same:
        r += a_nzval[ia] * b_nzval[ib]
    ~routine


@reversible
def decide(bit: Int, ia: Int, ib: Int, ia2: Int, ib2: Int, a_rowval: Array[Int, NNZ_A + 1],
           b_rowval: Array[Int, NNZ_B + 1]):
    """bit ^= "move b": a is exhausted, or b is not and its row comes first."""
    bit ^= (ia == ia2) or ((ib != ib2) and (b_rowval[ib] < a_rowval[ia]))


@reversible
def sparse_dot(r: Out, a_colptr: Array[Int, COLS + 1] = exactly(A_COLPTR),  # noqa: B008
               a_rowval: Array[Int, NNZ_A + 1] = exactly(A_ROWVAL),  # noqa: B008
               a_nzval: Array[Fixed[-4, 4], NNZ_A] = A_NZVAL,
               b_colptr: Array[Int, COLS + 1] = exactly(B_COLPTR),  # noqa: B008
               b_rowval: Array[Int, NNZ_B + 1] = exactly(B_ROWVAL),  # noqa: B008
               b_nzval: Array[Fixed[-8, 8], NNZ_B] = B_NZVAL):
    keeper = ancilla(Array[Int, ROWS + ROWS])
    for j in range(COLS):
        ia = ancilla(0)
        ib = ancilla(0)
        with routine():
            ia2 = ancilla(0)
            ib2 = ancilla(0)
            steps = ancilla(0)
            ia2 += a_colptr[j + 1]
            ib2 += b_colptr[j + 1]
            steps += a_colptr[j + 1] - a_colptr[j] + b_colptr[j + 1] - b_colptr[j]
        ia += a_colptr[j]
        ib += b_colptr[j]
        for step in range(steps):
            product(r, ia, ib, ia2, ib2, a_rowval, a_nzval, b_rowval, b_nzval)
            decide(keeper[step], ia, ib, ia2, ib2, a_rowval, b_rowval)
            if keeper[step]:
                ib += 1
            else:
                ia += 1
        with inverse():
            for step in range(steps):
                decide(keeper[step], ia, ib, ia2, ib2, a_rowval, b_rowval)
                if keeper[step]:
                    ib += 1
                else:
                    ia += 1
        ia -= a_colptr[j]
        ib -= b_colptr[j]
        ~routine
        # the inverse merge walked the pointers back: a relation between two different
        # loops, which the compiler does not prove; the machine checks it
        free(ia, 0, checked=True)
        free(ib, 0, checked=True)
    free(keeper)
