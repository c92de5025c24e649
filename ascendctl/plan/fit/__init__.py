"""Memory fit: will a profile fit its devices, how many KV tokens, and which knob changes the answer.

`cache` (bytes per token, block rounding), `budget` (weights, profiling peak, graphs, HCCL buffers, reserve),
`estimate` (pure: inputs → per-device budget, verdict, suggestions), `result` (that answer, `FitResult`: plain
data, which a `Plan` carries), `inputs` (the plan, the model on disk and the host facts → inputs). One owner
for each number: the HBM rule of `check`, `plan`'s fit line and the `HCCL_BUFFSIZE` lint all ask this package.
"""
