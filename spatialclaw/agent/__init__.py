"""The agent layer: the code-as-action loop, its prompts, context, limits, question parsing and answer extraction."""
