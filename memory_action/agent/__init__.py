"""Model selection, the tools that read the pull request, prompts, running one conversation,
refused calls the model repeats, skills (SKILL.md), and each model request as it happens
(``progress``, ``progress_line``).

Deliberately empty of imports: LangChain costs about a second to import, so only code that builds
an agent imports ``memory_action.agent.<module>``.
"""
