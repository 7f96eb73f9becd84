"""`python -m pimem` is `pimem`."""

from ._cli import main

raise SystemExit(main())
