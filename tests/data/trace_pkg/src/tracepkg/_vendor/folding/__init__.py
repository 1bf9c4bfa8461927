"""Vendored code that imports itself under its original root, `folding`."""
