"""The integer algorithms of the function-accumulate families, one module per family.

``cordic`` holds the shared CORDIC data path (constant tables, the four
kernels, the roundings); ``circular`` (sin, cos, tan, atan, atan2),
``hyperbolic`` (sinh, cosh, tanh), ``exp_log`` (exp, log, pow),
``square_root`` and ``arithmetic`` (abs, mul, div) build the functions on it;
``errors`` holds the faults they raise.  Import them from
:mod:`revasm.isa.elementary`, which lists them by name with their error bounds.
"""
