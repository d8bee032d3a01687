## man/
