## bench/
