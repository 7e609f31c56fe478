{% macro idempotent_merge_plan(existing, rebuild) %}
    {#-
        What idempotent_merge can settle before anything is written, not even the staging
        relation: the interval (parsed once), a --full-refresh that would shrink the history
        (idempotent_merge_full_refresh_check), and, when the model merges into an existing
        table, every config checked against the table's columns (one error listing every
        problem). Returns {'bounds', 'table' (its columns, or none), 'cfg' (or none until the
        model's columns are known, on a first load), 'rebuild' (--full-refresh or a view: the
        CREATE may replace)}; idempotent_merge_run takes it from there.
    -#}
    {%- set microbatch = config.get('incremental_strategy') == 'microbatch' -%}
    {%- set bounds = interval_bounds() if interval_given() or microbatch or config.get('interval_column') else none -%}
    {%- set plan = {'bounds': bounds, 'table': none, 'cfg': none, 'rebuild': rebuild} -%}
    {%- if existing is not none and rebuild -%}
        {%- do idempotent_merge_full_refresh_check(existing, bounds) -%}
    {%- elif existing is not none -%}
        {%- set table = idempotent_merge_columns(existing) -%}
        {%- set applied = idempotent_merge_applied_column() -%}
        {%- set problems = [] -%}
        {%- if applied and applied not in (table.names | map('lower') | list) -%}
            {%- set problem -%}
                {{ existing }} has no {{ applied }} column, so it cannot tell which batches were
                applied to each row (it was built before idempotent_merge recorded them).
                Rebuild it once over its whole history: set the model's begin config to its
                first day and run it with --full-refresh over [begin, end).
            {%- endset -%}
            {%- do problems.append(problem) -%}
        {%- endif -%}
        {%- set model_columns = table.names | reject('equalto', applied) | list -%}
        {%- do plan.update({
            'table': table,
            'cfg': idempotent_merge_config(model_columns, table.types, bounds, problems),
        }) -%}
    {%- endif -%}
    {{ return(plan) }}
{% endmacro %}
