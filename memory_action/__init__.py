"""memory-agent: an LLM review agent whose memory survives between GitHub Actions runs."""

from memory_action.version import __version__

__all__ = ["__version__"]
