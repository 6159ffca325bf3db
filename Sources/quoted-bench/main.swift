struct P {}
