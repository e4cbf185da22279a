"""An example third-party alkstore engine: the job-queue contract over a plain Python dict, as a kit driver.

It is registered as ``example-dict`` under the ``alkstore.engines`` entry point
(see ``pyproject.toml``), so once installed, ``pytest --alkstore-engine=example-dict``
or ``alkstore certify example-dict`` certifies it from any directory.
"""

from .dict_adapter import DictAdapter
from .driver import DictDriver

adapter = DictAdapter()
"""The object the ``alkstore.engines`` entry point names."""

__all__ = ["DictAdapter", "DictDriver", "adapter"]
