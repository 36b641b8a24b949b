"""What keeps untrusted text and secrets from doing harm: the secret detector, the
outgoing gate every posted or saved text passes, Markdown made safe, ASCII-only numbers,
untrusted JSON's first problem named for people, and walks and removals that never follow a
link.

The bottom of the house: it imports nothing of memory-agent but ``errors``."""
