"""`tracerl serve`: the recording OpenAI-compatible endpoint. Arguments: tracerl.cli.args."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

import torch

from tracerl.cli.args import SERVE_DESCRIPTION
from tracerl.cli.args import add_serve_arguments as add_arguments
from tracerl.serve.engine import ServeConfig
from tracerl.serve.episodes import OnMismatch
from tracerl.serve.server import HOST, bind, build_service, load_served, serve_forever
from tracerl.train.configlib import ConfigError
from tracerl.train.runner import describe_tools
from tracerl.train.threads import choose_threads


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; 2 on bad arguments."""
    try:
        if args.out and not args.train:
            raise ValueError("--out writes the learner's checkpoints: it needs --train")
        if min(args.max_tokens, args.max_batch, args.max_episodes, args.max_anonymous) < 1:
            raise ValueError("--max-tokens, --max-batch, --max-episodes and --max-anonymous "
                             "must be >= 1")
        if not args.max_body_mb > 0:
            raise ValueError(f"--max-body-mb must be > 0, got {args.max_body_mb}")
        served = load_served(args.source, args.overrides)
    except (ConfigError, ValueError, FileNotFoundError) as e:
        sys.stderr.write(f"tracerl serve: {e}\n")
        return 2
    choice = choose_threads(served.config.threads)
    torch.set_num_threads(choice.threads)
    if choice.warning():
        sys.stderr.write(f"{choice.warning()}\n")
    mismatch: OnMismatch = args.on_mismatch
    config = ServeConfig(model_name=args.name or served.name,
                         default_max_tokens=args.max_tokens,
                         describe_tools=describe_tools(served.config, served.policy),
                         on_mismatch=mismatch,
                         max_rows=args.max_batch, max_open_episodes=args.max_episodes,
                         max_anonymous_episodes=args.max_anonymous,
                         record_anonymous=not args.no_record_anonymous,
                         max_body_bytes=int(args.max_body_mb * 2**20))
    service = build_service(served, config, train=args.train,
                            run_dir=Path(args.out) if args.out else None)
    _log_updates()
    sock = bind(args.port)  # bound first, so that --port 0 prints the port it got
    train = " (training: POST /v1/train)" if args.train else ""
    print(f"tracerl serve: {served.source} as model '{config.model_name}' on "
          f"http://{HOST}:{sock.getsockname()[1]}/v1{train}", flush=True)
    if args.train:
        print(f"tracerl serve: each update is checkpointed to {args.out}" if args.out else
              "tracerl serve: updates stay in memory and are discarded at exit; pass "
              "--out RUN_DIR to checkpoint each one", flush=True)
    try:
        serve_forever(service.app, sock)
    except KeyboardInterrupt:
        pass
    return 0


def _log_updates() -> None:
    """One line per training step (and the server's warnings) on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s: %(message)s", "%H:%M:%S"))
    for name in ("tracerl.serve", "tracerl.train"):
        logger = logging.getLogger(name)
        logger.setLevel(logging.INFO)
        logger.addHandler(handler)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tracerl serve", description=SERVE_DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    return run(parser.parse_args(argv))

if __name__ == "__main__":
    raise SystemExit(main())
