"""STS_q's science: the task, the positional encodings, the models, the training step, the data, the oracle, the
FCN's width floor."""
