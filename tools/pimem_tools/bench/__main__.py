"""`python -m pimem_tools.bench`: how pimem-bench re-executes itself from an exported commit."""

from pimem_tools.bench import main

raise SystemExit(main())
