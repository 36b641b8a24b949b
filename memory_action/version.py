"""Which memory-agent this is: ``--version``, and the User-Agent its requests carry.

At the bottom of the house, so that a store's HTTP client can name itself without importing the
package above it.
"""

__version__ = "0.1.0"
USER_AGENT = f"memory-agent/{__version__}"
