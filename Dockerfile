# memory-agent: a Docker container action. The install step is the same command the tests use
# (the locked constraints in constraints.txt), without the test extra.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /action
COPY pyproject.toml constraints.txt README.md entrypoint.py ./
COPY memory_action ./memory_action
RUN pip install --no-compile -c constraints.txt . \
    && python -c "import memory_action.main"

# Docker actions run as root (GitHub requires it); restored files get the workspace's owner.
ENTRYPOINT ["python", "/action/entrypoint.py"]
