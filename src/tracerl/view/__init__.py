"""`tracerl view`: a local, read-only web dashboard over run directories (app.py).

`create_app(run_dirs)` is the Starlette application; the CLI (tracerl.cli.view) serves it
with uvicorn. Needs the `view` extra (starlette, uvicorn).
"""
