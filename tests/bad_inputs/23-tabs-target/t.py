if x:
	f(1, a=2)
