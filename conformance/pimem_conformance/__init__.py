"""pimem_conformance: the conformance suite for journal-index memories for Pi."""

__version__ = "0.1.0"
