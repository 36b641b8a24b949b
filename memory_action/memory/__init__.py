"""The agent's memory: which files it is, how it is shown to the model, how the model edits it.

``sources`` loads the files (read-only ones from the repository, then the one writable memory
file), ``render`` turns them into the ``<agent_memory>`` block of the system prompt, ``tools``
gives the model ``edit_file``/``write_file`` confined to the writable file, ``middleware`` wires
both into a LangChain agent, and ``diff`` shows what a run changed. ``proposals``,
``provenance`` and ``state`` are what a saved entry carries besides the text; ``trust`` and
``markers`` are memory's own words for who wrote a line and which comments are ours.

Only ``tools`` and ``middleware`` import LangChain, so nothing here pays its import cost unless an
agent is built.
"""
