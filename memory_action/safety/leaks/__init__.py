"""The scrubber's detectors, one layer per module; ``safety.scrub`` combines them.

``formats``: token families providers document (prefix, length, alphabet, checksum), private key
blocks, JWTs. ``context``: a value in a credential position (a credential-like name, a CLI flag, a
header, URL userinfo, a connection string), judged by its shape only there. ``masked``: the values
this run masked, in every encoding. ``shape`` holds the value judgements they share, and
``candidate`` what they all return.
"""
