"""The one exception type the CLI turns into a sentence and exit code 2."""


class UserError(Exception):
    """Bad input, config or usage. The message is one sentence naming what and where."""
