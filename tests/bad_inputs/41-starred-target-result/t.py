value = compute()
