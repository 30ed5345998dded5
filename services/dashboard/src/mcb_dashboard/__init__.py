"""The ops dashboard (issue 16): server-rendered HTML over the stack's health, operations and recovery."""

__version__ = "0.1.0"
