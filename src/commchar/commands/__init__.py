"""One module per command-line verb.

Each module defines NAME, HELP, `configure(parser)` to declare its options and
`execute(args, console) -> int`. The command line discovers them here, so a new
verb is a new file and nothing else changes.
"""
