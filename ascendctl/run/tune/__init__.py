"""`ascendctl tune`: search a grid of settings with the benchmark and keep the best under the SLOs.

- `grid`: `--grid KEY=V1,V2` parsed; combinations ordered so each distinct engine setting costs one start;
- `goal`: the SLO names (one table, from the metrics the benchmark reports), SLO filtering, the winner;
- `trials`: the trial loop, with the engine and benchmark behind a small interface (`EngineStarter`);
- `tuned`: the winning profile (`<stem>.tuned.yaml`) and the report with every trial;
- `suggest`: grids worth trying for a profile's backend and release, each value planned to prove it is accepted;
- `bench_runner`: the `EngineStarter` that runs `ascendctl bench`'s engine start and `vllm bench serve`.
"""
