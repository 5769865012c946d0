"""Provider processes on the inner seam: launch, initialize, the warm-session supervisor and the callbacks a provider may make."""
