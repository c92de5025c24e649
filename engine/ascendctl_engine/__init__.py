"""ascendctl's bundled engine, imported as `ascendctl_engine`: shipped in the one `ascendctl` distribution, its folder
engine/ascendctl_engine/.

It drives vLLM (+ vllm-ascend on NPUs): engine environments, version-era adapters, launch and
supervision, host probes. It never imports `ascendctl`; its inputs are its own small typed specs.
"""

__version__ = "0.1.0"

__all__: list[str] = []
