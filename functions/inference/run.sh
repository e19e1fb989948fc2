#!/bin/sh
# Lambda Web Adapter (the LambdaAdapterLayer's /opt/bootstrap, started through
# AWS_LAMBDA_EXEC_WRAPPER) runs this script as the function's handler, waits until
# /healthz answers on AWS_LWA_PORT, then turns each invocation into an HTTP request to
# uvicorn and streams the response back. The memvault layer is /opt/python.
export PYTHONPATH="/opt/python:${LAMBDA_TASK_ROOT:-.}${PYTHONPATH:+:$PYTHONPATH}"
exec python -m uvicorn app:app \
  --host 127.0.0.1 --port "${AWS_LWA_PORT:-8080}" \
  --no-access-log --log-level warning --timeout-keep-alive 75
