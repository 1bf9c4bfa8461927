"""Context parallelism for cpfold: process grid, pair layout, Cannon/ring
triangle-multiplication matmul, communication primitives, and the transparent
``ContextParallel`` wrapper (``cpfold.cp.wrapper``)."""
from .layout import LOCAL, CPGrid, PairLayout, check_grid_shape

__all__ = ["LOCAL", "CPGrid", "PairLayout", "check_grid_shape", "ContextParallel", "CPContext"]


def __getattr__(name):          # lazy: the wrapper imports the model, which imports .layout
    if name in ("ContextParallel", "CPContext"):
        from . import wrapper
        return getattr(wrapper, name)
    raise AttributeError(name)
