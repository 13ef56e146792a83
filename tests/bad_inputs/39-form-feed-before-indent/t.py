def k():
    f(1, a=2)
    return 1
