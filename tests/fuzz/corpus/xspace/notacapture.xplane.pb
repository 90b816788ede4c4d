hello, I am not a capture
