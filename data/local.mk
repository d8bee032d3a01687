## data/
