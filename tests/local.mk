## tests/
