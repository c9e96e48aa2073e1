"""Trained models run in NumPy with the functions the lessons teach (CPython and Pyodide)."""
