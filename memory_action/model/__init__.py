"""The model the run talks to: its limits by provider and name, the window a local server
reports, and the token estimate every budget uses."""
