"""The cost of a sweep, the cluster's requests, GPU slots and the pilot."""
