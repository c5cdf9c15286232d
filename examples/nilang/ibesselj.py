"""ibesselj: the Bessel function of the first kind by its series (NiLang paper).

    J_nu(z) = sum_k (-1)^k (z/2)^(2k+nu) / (k! (k+nu)!)

Each term is the previous one times -(z/2)^2 / (k (k+nu)); that in-place
product uses NiLang's *approximate multiplier* ``imul``: it cannot be exact in
fixed point, so the rounding residual is kept in an ancilla (anc4) instead of
being erased.  Before each product, the previous residual is swapped into a fresh
cell of ``residuals`` (indexed by k) so anc4 starts at zero: reusing anc4 as is
would fold the residual r into the next term and leave -r/x, amplified by 1/x each
iteration (~1e-10 per term in fixed point, not NiLang's ~1e-17).  The loop stops
when the term is below ATOL (NiLang's residual bound is not needed: no residual
is ever fed back).  Order NU = 2 (the paper's example); everything else is
uncomputed.
"""
from revasm.compiler import SWAP, Array, Fixed, Out, ancilla, free, reversible, routine, sq

NU = 2
NU_FACTORIAL = 2.0
ATOL = 1e-6
#: residual cells, one per term: enough for z up to ~15 at ATOL
KMAX = 32


@reversible
def imul(out: Fixed, x: Fixed, anc: Fixed):
    """out *= x, approximately: anc receives the product, out keeps the residual; swap."""
    anc += out * x
    out -= anc / x
    SWAP(out, anc)


@reversible
def ibesselj(out: Out, z: Fixed[-2, 2] = 1.0):
    k = ancilla(0)
    kf = ancilla(0.0)
    k_nu = ancilla(0.0)
    fact_nu = ancilla(NU_FACTORIAL)
    halfz = ancilla(0.0)
    halfz_power_nu = ancilla(0.0)
    halfz_power_2 = ancilla(0.0)
    out_anc = ancilla(0.0)
    anc1 = ancilla(0.0)
    anc2 = ancilla(0.0)
    anc3 = ancilla(0.0)
    anc4 = ancilla(0.0)
    residuals = ancilla(Array[Fixed, KMAX])
    with routine():
        halfz += z / 2
        halfz_power_nu += halfz ** NU
        halfz_power_2 += sq(halfz)
        anc1 += halfz_power_nu / fact_nu
        out_anc += anc1
        k_nu += NU
        while (abs(anc1) > ATOL, k != 0):
            k += 1
            kf += 1
            k_nu += 1
            SWAP(anc4, residuals[k])
            with routine():
                anc2 -= kf * k_nu
                anc3 += halfz_power_2 / anc2
            imul(anc1, anc3, anc4)
            out_anc += anc1
            ~routine
    out += out_anc
    ~routine
    free(residuals)
    free(anc4, 0.0)
    free(anc3, 0.0)
    free(anc2, 0.0)
    free(anc1, 0.0)
    free(out_anc, 0.0)
    free(halfz_power_2, 0.0)
    free(halfz_power_nu, 0.0)
    free(halfz, 0.0)
    free(fact_nu, NU_FACTORIAL)
    free(k_nu, 0.0)
    free(kf, 0.0)
    free(k, 0)
