# memory-agent: a Docker container action, in two stages. The build stage makes the runtime
# virtual environment with scripts/runtime-venv (the locked constraints.txt the tests install with;
# no pip, no bytecode, extension modules stripped); the runtime stage is distroless (no shell, no
# package manager), gets that venv at the same path and compiles the bytecode of what a run
# imports. bench/image.py measures both; bench/README.md gives the figures and their sources.
#
# The runtime's interpreter is Debian 12's python3.11 (distroless python3-debian12 is built from
# Debian's packages; it runs /usr/bin/python3.11). The venv is built with that same Debian
# interpreter, at the same /usr/bin path, as the distroless project's python3-requirements
# example does: a venv made by another Python (python:3.11-*) would point at an interpreter the
# runtime does not have.
FROM debian:12-slim AS build
# Unpinned on purpose: the build must follow Debian 12's security updates of python3.11, as the
# distroless image it runs on does (both come from Debian's archive).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install --yes --no-install-recommends python3.11-venv python3-pip binutils \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml constraints.txt README.md ./
COPY memory_action ./memory_action
COPY scripts/runtime-venv ./scripts/runtime-venv
RUN PYTHON=/usr/bin/python3.11 scripts/runtime-venv /opt/venv

# Distroless tags each Debian release's image only as latest, nonroot, debug and debug-nonroot
# (its SUPPORT_POLICY.md); nonroot cannot run an action. A release pins the built image by digest.
# hadolint ignore=DL3007
FROM gcr.io/distroless/python3-debian12:latest
ENV PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH
COPY --from=build /opt/venv /opt/venv
# entrypoint.py alone in /action: the package is imported from the venv, not from a source tree.
COPY entrypoint.py scripts/precompile.py /action/
# Bytecode for the modules a run imports, the standard library's too (distroless unpacks Debian's
# packages, which ship no .pyc); at run time nothing more is written: each job's container is
# thrown away. Exec form throughout: the image has no shell.
RUN ["/opt/venv/bin/python", "/action/precompile.py"]
ENV PYTHONDONTWRITEBYTECODE=1

# Docker actions run as root (GitHub requires it; distroless's default user is root); restored
# files get the workspace's owner.
ENTRYPOINT ["/opt/venv/bin/python", "/action/entrypoint.py"]
