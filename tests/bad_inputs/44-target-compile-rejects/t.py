foo(1)
f(a=1, a=2)
