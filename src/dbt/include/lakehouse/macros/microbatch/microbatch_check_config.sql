{% macro microbatch_check_config() %}
    {#-
        The configs a microbatch model needs on the lakehouse adapter, checked before anything
        is written (dbt itself checks event_time, begin and batch_size when it parses):
        a unique_key (each batch is reconciled by idempotent_merge, which matches rows by key),
        and no concurrent_batches: true. Batches run in one SparkSession whose commit-metadata
        settings (the interval ledger, lakehouse_commit_metadata) are session-wide, so two
        batches committing at once could each label its commit with the other's interval;
        dbt-spark does not declare MicrobatchConcurrency either, so dbt would run them one
        after the other anyway.
    -#}
    {%- set problems = [] -%}
    {%- if not config.get('unique_key') -%}
        {%- set problem -%}
            unique_key is not set. Each batch is reconciled with idempotent_merge, which
            matches the batch's rows to the table's by key: set unique_key to the column (or
            list of columns) that identifies a row, e.g. unique_key='order_id'.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- if config.get('concurrent_batches') -%}
        {%- set problem -%}
            concurrent_batches: true is not supported on the lakehouse adapter. Each batch
            labels its commit with its interval through session-wide commit-metadata settings
            of the one SparkSession, so concurrent batches could record each other's intervals
            in the ledger. Remove concurrent_batches (batches then run one after the other;
            each is still one atomic commit, or none).
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- do idempotent_merge_raise('is misconfigured:', problems) -%}
{% endmacro %}
