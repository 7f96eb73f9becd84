"""pimem_tools: the fixture generator and the benchmark."""
