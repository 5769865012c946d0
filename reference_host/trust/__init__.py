"""Trusted configuration: the repository policy, the trusted provider manifests, and launch grants."""
