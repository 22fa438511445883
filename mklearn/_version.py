"""The version of mklearn (``mklearn.__version__``), the one of pyproject.toml."""

__version__ = "0.1.0"
