## examples/
