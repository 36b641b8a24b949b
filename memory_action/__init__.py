"""memory-agent: an LLM review agent whose memory survives between GitHub Actions runs."""

__version__ = "0.1.0"
