"""A maintenance run: its checks before the model, the code it cites, and its output
(a direct save or a pull request)."""
