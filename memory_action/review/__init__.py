"""The review: what a pull request's review reads (file selection, compressed hunks, batches),
how it is assembled, vetted and costed (the engine), the agent ``session`` that runs it,
``inline_review`` (one review with inline comments, the findings ledger, incremental reviews)
and ``review_feedback`` (people's replies turned into proposals)."""
