{% macro py_script_comment() %}
    {#-
        dbt-core appends this macro's output to every compiled Python model (the lakehouse
        adapter's version overrides dbt-core's empty one). It hands the model the interval
        parsed by interval_bounds() (the one parser), as dbt.interval with UTC datetimes .start
        and .end, so Python models filter exactly like SQL models. A model that never reads
        dbt.interval does not need an interval; one that does gets the usual message without it.
    -#}
    {%- set b = interval_bounds() if interval_given() else none %}
import datetime as _dbt_datetime


class _DbtInterval:
    """The requested half-open interval [start, end), UTC."""
{%- if b is not none %}
    start = _dbt_datetime.datetime.fromisoformat("{{ b.start.isoformat() }}")
    end = _dbt_datetime.datetime.fromisoformat("{{ b.end.isoformat() }}")
{%- else %}

    def __getattr__(self, name):
        raise RuntimeError(
            "{{ this }}: no interval was given (dbt.interval). Pass it with "
            "--event-time-start 2026-10-03 --event-time-end 2026-10-04, or with "
            "--vars '{data_interval_start: \"2026-10-03\", data_interval_end: \"2026-10-04\"}'"
        )
{%- endif %}


dbtObj.interval = _DbtInterval()
{% endmacro %}
