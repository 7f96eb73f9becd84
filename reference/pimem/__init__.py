"""pimem: the reference journal-index memory for the Pi coding agent."""

__version__ = "0.1.0"
SPEC_VERSION = "0.2.0"  # the spec this implementation follows (0.2.0 is open until it is frozen)
