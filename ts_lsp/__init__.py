"""ts-lsp: the ts language server (pygls 2), running the ts_lint engine in-process.

`python -m ts_lsp` (or the `ts-lsp` script) serves over stdio; `--tcp HOST:PORT` over TCP.
Importing this package is light: pygls and ts_lint are loaded only when the server starts.
"""
__version__ = "0.1.0"
__all__ = ["__version__"]
