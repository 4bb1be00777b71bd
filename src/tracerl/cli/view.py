"""`tracerl view RUN_DIR [RUN_DIR ...] [--port PORT] [--host HOST]`: serve the dashboard.

The socket is bound here, before the server starts, so that `--port 0` (a free port)
prints the address it really got and a port in use is a one-line error rather than a
server's traceback. uvicorn then serves the Starlette app (app.py) on that socket until
Ctrl-C. Arguments and usage: `tracerl.cli.args`.
"""

from __future__ import annotations

import argparse
import socket
import sys

from tracerl.cli.args import VIEW_DESCRIPTION
from tracerl.cli.args import add_view_arguments as add_arguments

MISSING = ("tracerl view needs starlette and uvicorn: pip install 'tracerl[view]' "
           "(missing: {name})")


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on (host, port); OSError says why it could not be had."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from tracerl.view.app import create_app
    except ImportError as e:  # the optional extra is not installed
        print(MISSING.format(name=e.name), file=sys.stderr)
        return 2
    try:
        app = create_app(args.run_dirs)
    except ValueError as e:
        print(f"tracerl view: {e}", file=sys.stderr)
        return 2
    try:
        sock = bind(args.host, args.port)
    except OSError as e:
        print(f"tracerl view: cannot listen on {args.host}:{args.port}: {e.strerror or e}"
              + (" (another --port, or 0 for any free one)" if args.port else ""),
              file=sys.stderr)
        return 2
    print(f"tracerl view: {url_of(sock)}  ({len(args.run_dirs)} run(s), read-only; "
          "Ctrl-C stops)", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        for run_files in app.state.viewer.runs:
            run_files.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tracerl view", description=VIEW_DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
