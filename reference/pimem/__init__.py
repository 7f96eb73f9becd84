"""pimem: the reference journal-index memory for the Pi coding agent."""

__version__ = "0.3.0"
SPEC_VERSION = "0.3.0"  # the spec release this implementation follows
