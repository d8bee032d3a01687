## arch/
