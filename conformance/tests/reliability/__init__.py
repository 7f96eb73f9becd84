"""Reliability tests (issue 8): a package, so its conftest never shadows another folder's `conftest`."""
