"""What every stage shares: the one exception family and its exit codes (`errors`), the one YAML load
boundary with key paths and node marks (`yamlio`), and the one finding type and rule registry (`findings`).

May import: the standard library, third-party libraries and `ascendctl_engine`; nothing else of `ascendctl`.
"""
