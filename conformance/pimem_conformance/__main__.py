"""`python -m pimem_conformance` is `pimem-conformance`."""

from pimem_conformance._cli import main

raise SystemExit(main())
