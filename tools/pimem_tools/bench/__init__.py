"""`pimem-bench`: the reference's performance at real users' scale, measured side by side in one run."""

from pimem_tools.bench._cli import main

__all__ = ["main"]
