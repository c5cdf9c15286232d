"""revasm: a toolchain for a reversible, differentiable processor."""
__version__ = "0.1.0"
