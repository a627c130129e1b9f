"""Validation: a port's harness driven against kvref (validate), and what it saw recorded as an entry's
behaviour evidence (behaviour)."""
