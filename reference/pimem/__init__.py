"""pimem: the reference journal-index memory for the Pi coding agent."""

__version__ = "0.1.0"
