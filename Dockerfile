# memory-agent: a Docker container action, in two stages. The build stage makes the runtime
# virtual environment with scripts/runtime-venv (the locked constraints.txt the tests install with;
# no pip, no bytecode, extension modules stripped); the runtime stage copies that venv onto the
# slim image and compiles the bytecode of what a run imports (bench/image.py measures both).
# 3.11, as the tests run: measured (bench/README.md), 3.13 saved 2 MB and started slower.
ARG PYTHON_VERSION=3.11

# The full image has binutils for strip; its Python is the slim image's, at the same path.
FROM python:${PYTHON_VERSION}-bookworm AS build
WORKDIR /src
COPY pyproject.toml constraints.txt README.md ./
COPY memory_action ./memory_action
COPY scripts/runtime-venv ./scripts/runtime-venv
RUN scripts/runtime-venv /opt/venv

FROM python:${PYTHON_VERSION}-slim-bookworm
ENV PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH
COPY --from=build /opt/venv /opt/venv
# entrypoint.py alone in /action: the package is imported from the venv, not from a source tree.
COPY entrypoint.py scripts/precompile.py /action/
# Bytecode for the modules a run imports, the standard library's too (the base image deletes it);
# at run time nothing more is written: each job's container is thrown away.
RUN python /action/precompile.py
ENV PYTHONDONTWRITEBYTECODE=1

# Docker actions run as root (GitHub requires it); restored files get the workspace's owner.
ENTRYPOINT ["python", "/action/entrypoint.py"]
