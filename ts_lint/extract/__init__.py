"""The static front end: source -> the shared ts_runtime model (no import, no execution).

Reading: `source` (ast-guided skeleton parse with libcst, lazy function bodies),
`positions` (source ranges). Names and values: `names` (qualified names of TS symbols),
`values` (abstract values). The interpreter: `interpreter` (calls, instances, roots of
execution), `expressions`, `statements`, `frames` (control flow), `skip` (effects of code
that cannot be run), `pybuiltins` (Python builtins and stdlib), `classes` (classes,
dataclasses, work methods). The TS API: `tsapi` (name resolution, decorators, hooks),
`configs`, `allocators`, `resources`, `kernel` (Task / TaskManager), `schedules`
(@schedule capture), `common`. Driving it: `roots` (what to run), `context` (findings,
limits). See docs/dev/ts-lint-extractor.md.
"""
