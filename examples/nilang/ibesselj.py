"""ibesselj: the Bessel function of the first kind by its series (NiLang paper).

    J_nu(z) = sum_k (-1)^k (z/2)^(2k+nu) / (k! (k+nu)!)

Each term is the previous one times -(z/2)^2 / (k (k+nu)); that in-place
product uses NiLang's *approximate multiplier* ``imul``: it cannot be exact in
fixed point, so the rounding residual is kept in an ancilla (anc4) instead of
being erased.  The loop stops when the term is below ATOL or the residual grows past
RESIDUAL_TOL.
Order NU = 2 (the paper's example); everything else is uncomputed.
"""
from revasm.compiler import SWAP, Fixed, Out, ancilla, free, reversible, routine, sq

NU = 2
NU_FACTORIAL = 2.0
ATOL = 0.0001
#: The residual of the approximate multiplier is ~ulp / |x| in fixed point (not
#: ~1e-16 as in NiLang's float64), so its bound is looser than the series'.
RESIDUAL_TOL = 0.01


@reversible
def imul(out: Fixed, x: Fixed, anc: Fixed):
    """out *= x, approximately: anc receives the product, out keeps the residual; swap."""
    anc += out * x
    out -= anc / x
    SWAP(out, anc)


@reversible
def ibesselj(out: Out, z: Fixed):
    k = ancilla(0)
    fact_nu = ancilla(NU_FACTORIAL)
    halfz = ancilla(0.0)
    halfz_power_nu = ancilla(0.0)
    halfz_power_2 = ancilla(0.0)
    out_anc = ancilla(0.0)
    anc1 = ancilla(0.0)
    anc2 = ancilla(0.0)
    anc3 = ancilla(0.0)
    anc4 = ancilla(0.0)
    anc5 = ancilla(0.0)
    with routine():
        halfz += z / 2
        halfz_power_nu += halfz ** NU
        halfz_power_2 += sq(halfz)
        anc1 += halfz_power_nu / fact_nu
        out_anc += anc1
        while ((abs(anc1) > ATOL) and (abs(anc4) < RESIDUAL_TOL), k != 0):
            k += 1
            with routine():
                anc5 += k
                anc5 += NU
                anc2 -= k * anc5
                anc3 += halfz_power_2 / anc2
            imul(anc1, anc3, anc4)
            out_anc += anc1
            ~routine
    out += out_anc
    ~routine
    free(anc5, 0.0)
    free(anc4, 0.0)
    free(anc3, 0.0)
    free(anc2, 0.0)
    free(anc1, 0.0)
    free(out_anc, 0.0)
    free(halfz_power_2, 0.0)
    free(halfz_power_nu, 0.0)
    free(halfz, 0.0)
    free(fact_nu, NU_FACTORIAL)
    free(k, 0)
