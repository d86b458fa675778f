"""orgkit: deep, fast memory over plain org files."""

__version__ = "0.1.0"
