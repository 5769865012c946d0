"""Shapes and their areas."""
import os


PATTERN = "\d+ sides"


def area(width, height):
    unused = width * 2
    return width * height * scale_factor


def describe(name):
    """Describe a shape.
    >>> describe(missing_in_doctest)
    'a shape'
    """
    return "a shape"
