{% macro lakehouse_commit_metadata_key(file_format) %}
    {#-
        The session setting whose value the table format writes into the metadata of the next
        commit, in that same commit: Delta's commitInfo.userMetadata (DESCRIBE HISTORY
        userMetadata); for Iceberg (1.12) spark.sql.iceberg.snapshot-property.<name>, which
        SparkWriteConf adds to the snapshot summary of every Spark write, a SQL MERGE and
        CREATE TABLE AS included (summary key lakehouse.ledger).
    -#}
    {%- if file_format == 'iceberg' -%}
        {{ return('spark.sql.iceberg.snapshot-property.lakehouse.ledger') }}
    {%- endif -%}
    {{ return('spark.databricks.delta.commitInfo.userMetadata') }}
{% endmacro %}
