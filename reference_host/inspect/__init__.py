"""`host/queryInspect`: choosing inspect providers, running the query and checking their answers."""
