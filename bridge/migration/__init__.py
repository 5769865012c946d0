"""Old-tool migration checks: can what an agent used before be served by the ASP host?

Pure, typed functions (name mapping, findings parsing, parity matching, coverage, report); the
MCP tool and CLI wiring live in `bridge/tools/migration.py` and `bridge/commands/migration_check.py`. Nothing here
ever claims an old tool can be retired: every report carries `replacementClaimed: false`.
"""
