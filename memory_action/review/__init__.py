"""Review a pull request within a model's input limit (issue 7).

``selection`` decides which changed files are read and in which order (source, tests, docs,
config) and says why the rest are skipped (``gitattributes`` reads Linguist's generated and
vendored marks); ``diff`` parses GitHub's per-file patches and trims their context while keeping
every hunk header exact; ``batches`` packs the compressed diffs into requests that each fit a
token capacity, splitting what is too large and listing whatever the call budget cannot cover.
These modules are pure: they take values, never settings or clients.
"""
