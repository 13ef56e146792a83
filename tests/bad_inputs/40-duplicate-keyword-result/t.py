x = 1
f(1, mask=m)
