"""The package's version: one place, importable by every layer."""

__version__ = "0.1.0"
