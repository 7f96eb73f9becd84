"""`python -m pimem_conformance`: the `pimem-conformance` command."""

import sys

from pimem_conformance import main

sys.exit(main())
