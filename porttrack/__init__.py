"""porttrack: keep a port or long-lived fork honest against its upstream."""

__version__ = "0.1.0"
