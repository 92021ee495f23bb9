"""``guards compare``: is N-process training the same training as one process?

Recording (``python -m guards --record DIR SCRIPT``, under torchrun or not) writes, per rank and
per optimizer step, the sample indices and the digests of the data rows that trained (those a
``backward()`` followed), the batch size, the loss that reached ``backward()``, the gradient norm,
the learning rates and a parameter checksum. Comparing (``python -m guards compare``) merges the
ranks of each run and names the first step where two runs diverge, with its cause. Only the
recording side (hooks, recorder, sampling, norms, digests) imports torch; it runs in the workers.
"""
