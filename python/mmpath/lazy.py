"""The heavy third-party libraries (numpy, pandas and with it pyarrow, matplotlib), imported on first use.

`mmpath --help`, `mmpath scenarios` and every parser of the command line import the whole
package, but most commands need few or none of these libraries, which take about a second to
import together. A module writes

    from .lazy import numpy as np, pandas as pd

instead of `import numpy as np` and uses `np` and `pd` as before: the library is imported the
first time an attribute is read (`np.zeros`, `pd.DataFrame`), and from then on every mmpath module
(this one included) holds the library itself in place of the stand-in.

`pyplot` is matplotlib.pyplot with the non-interactive Agg backend chosen first (the reports
and plots are written to files, and Agg needs no display).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any, Callable


class LazyModule(types.ModuleType):
    """A stand-in for module `name`, imported when an attribute is first read."""

    def __init__(self, name: str, before: Callable[[], None] | None = None) -> None:
        super().__init__(name)
        self.__dict__["_lazy_before"] = before

    def _lazy_load(self) -> types.ModuleType:
        before = self.__dict__["_lazy_before"]
        if before is not None:
            before()
        module = importlib.import_module(self.__name__)
        # Every mmpath module that bound this stand-in (`np`, `pd`, `plt`) now binds the module
        # itself: later reads cost nothing extra, and a test's monkeypatch of the library is
        # seen (the stand-in keeps no copies of the library's attributes).
        for name, mod in list(sys.modules.items()):
            if name == "mmpath" or name.startswith("mmpath."):
                space = getattr(mod, "__dict__", {})
                for key, value in list(space.items()):
                    if value is self:
                        space[key] = module
        return module

    def __getattr__(self, attr: str) -> Any:
        # Only called for names not in the stand-in's own __dict__ (which holds no library names).
        if attr.startswith("__") and attr.endswith("__") and attr != "__version__":
            raise AttributeError(attr)
        return getattr(self._lazy_load(), attr)

    def __dir__(self) -> list[str]:
        return dir(self._lazy_load())

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r}>"


def _agg_backend() -> None:
    import matplotlib  # heavy: imported here, on the first plot, not at start-up

    matplotlib.use("Agg")


numpy = LazyModule("numpy")
pandas = LazyModule("pandas")  # pandas imports pyarrow (Parquet) itself, when it is first used
pyplot = LazyModule("matplotlib.pyplot", before=_agg_backend)
