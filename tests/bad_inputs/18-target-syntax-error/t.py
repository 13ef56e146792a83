def f(:
    return 1
f(1, a=2)
