"""Model selection, the tools that read the pull request, prompts, and running the agent.

Deliberately empty of imports: LangChain costs about a second to import, so only code that builds
an agent imports ``memory_action.agent.<module>``.
"""
