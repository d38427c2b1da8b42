"""The heavy third-party libraries (numpy, pandas, pyarrow, matplotlib), imported on first use.

`mmpath --help`, `mmpath scenarios` and every parser of the command line import the whole
package, but most commands need few or none of these libraries, which take about a second to
import together. A module writes

    from .lazy import numpy as np, pandas as pd

instead of `import numpy as np` and uses `np` and `pd` as before: the library is imported the
first time an attribute is read (`np.zeros`, `pd.DataFrame`), and each attribute read is then
kept on the stand-in, so later reads cost what a module's own do.

`pyplot` is matplotlib.pyplot with the non-interactive Agg backend chosen first (the reports
and plots are written to files, and Agg needs no display).
"""

from __future__ import annotations

import importlib
import types
from typing import Any, Callable


class LazyModule(types.ModuleType):
    """A stand-in for module `name`, imported when an attribute is first read."""

    def __init__(self, name: str, before: Callable[[], None] | None = None) -> None:
        super().__init__(name)
        self.__dict__["_lazy_before"] = before
        self.__dict__["_lazy_module"] = None

    def _lazy_load(self) -> types.ModuleType:
        module = self.__dict__["_lazy_module"]
        if module is None:
            before = self.__dict__["_lazy_before"]
            if before is not None:
                before()
            module = importlib.import_module(self.__name__)
            self.__dict__["_lazy_module"] = module
        return module

    def __getattr__(self, attr: str) -> Any:
        # Only called for names not yet kept in this stand-in's own __dict__.
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        value = getattr(self._lazy_load(), attr)
        self.__dict__[attr] = value
        return value

    def __dir__(self) -> list[str]:
        return dir(self._lazy_load())

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r}>"


def _agg_backend() -> None:
    import matplotlib  # heavy: imported here, on the first plot, not at start-up

    matplotlib.use("Agg")


numpy = LazyModule("numpy")
pandas = LazyModule("pandas")
pyarrow_parquet = LazyModule("pyarrow.parquet")
matplotlib = LazyModule("matplotlib")
pyplot = LazyModule("matplotlib.pyplot", before=_agg_backend)
