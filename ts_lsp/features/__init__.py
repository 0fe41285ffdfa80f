"""Language features of ts-lsp: plain modules, each testable without a client.

* `diagnostics` - when to lint, push vs pull, stale-result dropping;
* `code_actions` - `# noqa` insertion and quick fixes from `Diagnostic.fix`;
* `hover` - resources, stage calls and `# noqa` codes under the cursor;
* `schedule` - the `ts.showSchedule` command;
* `noqa` - reading `# noqa` directives of one line.
"""
