"""The review engine: what a model can take (profile, token budget), what of a pull request it
reads (file selection, compressed hunks, batches), and how a review is assembled and costed."""
