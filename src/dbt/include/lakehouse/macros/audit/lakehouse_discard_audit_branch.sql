{% macro lakehouse_discard_audit_branch(schema, identifier, branch) %}
    {#-
        Discard a write-audit-publish branch of an Iceberg table that will not be published (a
        held-back change, or a leftover of a killed build): drop the branch, then expire the
        snapshots it alone held. Dropped but not expired, its snapshot stayed in
        `<table>.snapshots` (a reader taking "the newest snapshot" read the unaudited rows) and
        its data files stayed on disk. The branch's own snapshots are those from its head down
        to the first one in main's history (the snapshot it was created at).
    -#}
    {%- set relation = schema ~ '.' ~ identifier -%}
    {%- set head = run_query("select snapshot_id from " ~ relation ~ ".refs where name = '" ~ branch ~ "'").rows -%}
    {%- if not head -%}
        {{ return(none) }}
    {%- endif -%}
    {%- set parents = {} -%}
    {%- for row in run_query('select snapshot_id, parent_id from ' ~ relation ~ '.snapshots').rows -%}
        {%- do parents.update({row['snapshot_id']: row['parent_id']}) -%}
    {%- endfor -%}
    {%- set published = run_query('select snapshot_id from ' ~ relation ~ '.history where is_current_ancestor').columns[0].values() | list -%}
    {%- set own = [] -%}
    {%- set walk = {'at': head[0]['snapshot_id']} -%}
    {%- for _ in parents if walk.at is not none and walk.at not in published -%}
        {%- do own.append(walk.at) -%}
        {%- do walk.update({'at': parents.get(walk.at)}) -%}
    {%- endfor -%}
    {%- do adapter.execute_retrying('alter table ' ~ relation ~ ' drop branch if exists ' ~ branch) -%}
    {%- if own -%}
        {%- do adapter.execute_retrying("call spark_catalog.system.expire_snapshots(table => '" ~ relation ~ "', snapshot_ids => array(" ~ (own | join(', ')) ~ "))") -%}
    {%- endif -%}
{% endmacro %}
