{% macro idempotent_merge_applied_column() %}
    {#-
        The column idempotent_merge adds to the table of a model with batch_column: an array of
        every batch id applied to the row, written in the same commit as the row. None for a
        model without batch_column.
    -#}
    {{ return('applied_batches' if config.get('batch_column') else none) }}
{% endmacro %}
