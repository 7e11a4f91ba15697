"""Stand-ins for the dbt context objects that sqlfluff's jinja templater lacks.

`.sqlfluff` loads this package as its `library_path`: each module becomes a name of the Jinja
context the models are rendered with (`dbt`, `target`), next to sqlfluff's dbt builtins
(`ref`, `source`, `config`, `var`, `is_incremental`, `this`) and the project's macros
(`load_macros_from_path = macros`). With `execute = False` in the context, the project's
macros that query the lake (`held_max`, `resolved_batches`, `has_rows`, ...) return their
parse-time placeholders, so no Spark session is needed to lint.
"""
