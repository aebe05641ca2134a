"""The 'halluscope' command line (one package; each command group in a module of its own; cli/main.py holds the
entry point ``halluscope.cli.main:main`` and the command table). Nothing is imported here, so that
'halluscope --help' loads only what it lists."""
