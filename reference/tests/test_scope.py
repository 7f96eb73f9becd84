"""Project roots from discovered headers, and component-wise containment."""

from __future__ import annotations

import pytest
from pimem._scope import in_project, project_root

HOME = "/home/u"


@pytest.mark.parametrize(
    ("cwd", "known", "root"),
    [
        (
            "/home/u/Apps/prjct/prjct-be",
            ["/home/u/Apps/prjct", "/home/u/Apps/prjct/prjct-be"],
            "/home/u/Apps/prjct",
        ),
        (
            "/home/u/Apps/prjct/prjct-be",
            ["/home/u/Apps", "/home/u/Apps/prjct/prjct-be"],
            "/home/u/Apps/prjct/prjct-be",
        ),
        ("/home/u/notes", ["/home/u/notes"], "/home/u/notes"),
        ("/home/u/notes/sub", ["/home/u/notes", "/home/u", "/"], "/home/u/notes/sub"),
        ("/home/u", ["/home/u"], "/home/u"),
        ("/srv/app/x", ["/srv/app", "/srv"], "/srv/app"),
        ("/work/x", ["/work"], "/work/x"),
        ("/work", ["/work"], "/work"),
        ("/a/b/c/d", ["/a/b", "/a/b/c"], "/a/b"),
        ("/a/b/c/d/", ["/a/b/"], "/a/b"),
        ("/a/b/c", [], "/a/b/c"),
    ],
)
def test_project_root(cwd: str, known: list[str], root: str) -> None:
    assert project_root(cwd, HOME, known) == root


def test_containment_is_component_wise() -> None:
    assert in_project("/home/u/app/sub", "/home/u/app")
    assert in_project("/home/u/app/", "/home/u/app")
    assert not in_project("/home/u/app2", "/home/u/app")
    assert in_project("/anything", "/")
