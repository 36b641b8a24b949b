"""``memory-agent eval``: episodes of pull requests, reviews, reactions, replies, comment commands,
merges and maintenance replayed through the real action against a GitHub fake checked against
GitHub's published descriptions, with a scripted reviewer that obeys its memory, measured against
baselines. ``github/`` is that fake."""
