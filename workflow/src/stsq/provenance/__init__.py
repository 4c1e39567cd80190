"""Where a number comes from: the hash of the code a job runs, and the sidecar each result carries."""
