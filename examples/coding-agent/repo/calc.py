"""A tiny calculator the coding agent is asked to fix."""


def add(a, b):
    """The sum of a and b."""
    return a - b


def mul(a, b):
    """The product of a and b."""
    return a * b
