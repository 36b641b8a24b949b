"""Compile to bytecode what an action run imports, and nothing else.

    python scripts/precompile.py        # with the interpreter (or venv) the action runs on

The image's base deletes every ``.pyc`` and the runtime is read-only in practice (each job is a
fresh container), so without this every pull request run compiles the agent stack again. Compiling
every installed module costs far more space for modules no run imports (bench/image.py measures
both); this imports the modules a run on the default path reaches (the action, PyGithub, the cache
store, LangChain with the OpenAI-compatible provider GitHub Models uses) and writes bytecode for
each module then loaded, from the standard library too, as ``unchecked-hash`` pycs: the image never
changes, so Python need not compare them with their sources.
"""

from __future__ import annotations

import importlib
import importlib.util
import py_compile
import sys
from pathlib import Path

# What ``main()`` imports, eagerly or on the way through a pull request run (see its deferred
# imports), the model provider it builds by default, and what the HTTP clients load only when
# their first request goes out. bench/image.py runs a pull request and names any module missed.
RUN_MODULES = (
    "memory_action.main",
    "memory_action.pipeline",
    "memory_action.github.client",
    "memory_action.github.after_merge",
    "memory_action.commands.parse",
    "memory_action.commands.route",
    "memory_action.commands.replies",
    "memory_action.memory.items",
    "memory_action.store_wiring",
    "memory_action.store.cache_env",
    "memory_action.store.actions_cache",
    "memory_action.store.cache_admin",
    "memory_action.store.hygiene",
    "memory_action.store.archive",
    "memory_action.store.git",
    "memory_action.store.git_remote",
    "memory_action.store.tiered",
    "memory_action.agent.models",
    "memory_action.review.session",
    "langchain.chat_models",
    "langchain_openai",
    "openai.resources.chat.chat",
    "openai.resources.chat.completions.completions",
    "openai.lib.streaming.chat",
    "openai.pagination",
    "langchain_core.messages.block_translators.langchain_v0",
    "langchain_core.tracers.context",
    "langchain_core.tracers.run_collector",
    "langchain_core.tracers.stdout",
    "httpcore",
    "httpcore2",
    "h11",
    "anyio.abc",
    "anyio.streams.tls",
    "truststore",
    "jiter",
    "encodings.ascii",
    "encodings.utf_16_le",
    "collections.abc",
)
# Modules a run tries to import and goes on without, for want of an optional dependency (aiohttp,
# click, PySocks, h2, socksio, trio): compiled from their source, never imported.
OPTIONAL_MODULES = (
    "httpcore2._async.http2",
    "httpcore2._async.socks_proxy",
    "httpcore2._backends.trio",
    "httpcore2._sync.http2",
    "httpcore2._sync.socks_proxy",
    "openai._vendor.httpx_aiohttp",
    "openai._vendor.httpx_aiohttp.transport",
    "httpx._main",
    "urllib3.contrib.socks",
)


def optional_sources() -> list[str]:
    """The source files of ``OPTIONAL_MODULES``, found without importing them (nor their parent
    package, which may be one of them): from their top-level package's folder."""
    sources = []
    for name in OPTIONAL_MODULES:
        top, _, rest = name.partition(".")
        spec = importlib.util.find_spec(top)
        if spec is None or spec.origin is None:
            continue
        base = Path(spec.origin).parent.joinpath(*rest.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                sources.append(str(candidate))
    return sources


def loaded_sources() -> list[str]:
    """The ``.py`` file of every module loaded so far (built-in and extension modules have none)."""
    sources = set()
    for module in list(sys.modules.values()):
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str) and origin.endswith(".py"):
            sources.add(origin)
    return sorted(sources)


def main() -> int:
    sys.dont_write_bytecode = True  # the imports below must not write timestamp pycs
    for name in RUN_MODULES:
        importlib.import_module(name)
    sources = sorted({*loaded_sources(), *optional_sources()})
    for source in sources:
        py_compile.compile(
            source, doraise=True, invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH
        )
    print(f"compiled {len(sources)} modules")  # noqa: T201 - a build step's one line of output
    return 0


if __name__ == "__main__":
    sys.exit(main())
