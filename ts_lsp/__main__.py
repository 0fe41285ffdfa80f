"""`ts-lsp` / `python -m ts_lsp`: start the language server on stdio (default) or TCP."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import List, Optional, Tuple

from . import __version__


def _host_port(value: str) -> Tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host or "127.0.0.1", int(port)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ts-lsp", description="The ts language server (LSP).")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (default)")
    mode.add_argument("--tcp", metavar="HOST:PORT", type=_host_port,
                      help="serve over TCP, e.g. --tcp 127.0.0.1:2087")
    p.add_argument("--log-file", metavar="PATH", help="write the server log to PATH")
    p.add_argument("--log-level", default="WARNING",
                   choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="default: WARNING")
    p.add_argument("--version", action="version", version=f"ts-lsp {__version__}")
    return p


def _protect_stdout():
    """The LSP stream gets a private copy of fd 1; fd 1 and sys.stdout then go to stderr,
    so a stray print (ours, the engine's or a C library's) cannot corrupt the protocol."""
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return out


def main(argv: Optional[List[str]] = None) -> int:
    args = parser().parse_args(argv)
    handler = logging.FileHandler(args.log_file) if args.log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    logging.getLogger("ts_lsp").setLevel(args.log_level)

    from .server import create_server
    server = create_server()
    if args.tcp:
        host, port = args.tcp
        server.start_tcp(host, port)
    else:
        stdout = _protect_stdout()
        server.start_io(sys.stdin.buffer, stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
