
	/host:CPU
	/host:CPU