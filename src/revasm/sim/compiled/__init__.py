"""The compiled engine (``revasm.sim.compiled``): images as numba kernels, lanes over the cores.

``engine.ENGINE`` registers it; ``machine.CompiledLanes`` is the lane API;
``generate.kernel_source(image)`` prints the generated kernel of a program.
"""
