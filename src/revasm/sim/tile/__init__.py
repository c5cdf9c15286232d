"""The tile engine (``revasm.sim.tile``): SIMT tiles of lanes under one tile interpreter.

``engine.ENGINE`` registers it as ``tile``; ``lanes.TileLanes`` is the lane API;
``kernel.source(width)`` prints the tile interpreter.  README.md says how it works.
"""
