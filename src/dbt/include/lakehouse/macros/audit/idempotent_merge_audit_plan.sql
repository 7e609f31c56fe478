{#-
    Write-audit-publish, the decision: whether this model's change is staged for audit in this
    invocation, settled by the plan before anything is written. Staging is
    idempotent_merge_stage, publishing lakehouse_publish_audited.
-#}

{% macro idempotent_merge_audit_plan(rebuild) %}
    {#-
        Write-audit-publish (config publish: 'direct', the default, or 'audited'), settled
        before anything is written. Under 'audited', `dbt build` stages the model's change
        where readers of the published table cannot see it, and lakehouse_publish_audited
        (on-run-end) publishes it once every data test on the model passed. Returns
        {'publish': the config, 'staged': true/false, 'audited': whether its own data tests
        decide its publish (staged, and they run in this build), 'why': why the model
        publishes directly (logged), 'branch': the Iceberg branch name of this invocation,
        'with': the staged models it read}.
        A model that read a model staged in this build (adapter.stages_read_by), whatever its
        own publish, is staged too and published with them, or held back with them: no
        published row is built from a change that may never be published. An audited model
        publishes directly (as without the config) when no test of it runs in this invocation
        (`dbt run`, or a `dbt build` whose selection leaves its tests out) or when it has no
        data tests at all; a first load is staged in a table of its own and a --full-refresh
        publishes directly (it replaces the whole table, an operator's action).
        Refused, with the fix: an unknown value, a build that selects only some of an audited
        model's tests, a microbatch model that is audited or reads a staged model (dbt tests
        it once after all its batches, each its own commit), a --full-refresh that reads a
        staged model, and a staged build whose project does not call lakehouse_publish_audited
        in on-run-end (nothing would publish it).
    -#}
    {%- set publish = config.get('publish') or 'direct' -%}
    {%- set upstream = adapter.stages_read_by(model.unique_id) -%}
    {%- set microbatch = config.get('incremental_strategy') == 'microbatch' -%}
    {%- set plan = {'publish': publish, 'audited': publish == 'audited', 'staged': false, 'why': none, 'with': upstream, 'branch': adapter.audit_branch()} -%}
    {%- set problems = [] -%}
    {%- if publish not in ['direct', 'audited'] -%}
        {%- set problem -%}
            publish is {{ publish | tojson }}, which is not a known value. Use 'audited' (dbt
            build publishes the model's change only after its data tests pass) or 'direct'
            (the default: the change is committed when the model runs).
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- if publish == 'audited' and microbatch -%}
        {%- set problem -%}
            publish is 'audited' on a microbatch model. dbt runs its data tests once, after
            every batch has committed, so no batch could wait for them. Set publish: 'direct'
            (each batch is then one atomic commit, as before), or use idempotent_merge with
            the interval flags to audit one interval per build.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- elif upstream and (microbatch or rebuild) -%}
        {%- set problem -%}
            it reads {{ upstream | join(', ') }}, whose change is staged for audit in this build
            and not published yet, and {{ 'a microbatch model commits each batch as it runs' if microbatch else '--full-refresh replaces the table at once' }}:
            it would publish rows built from a change that may never be published. Build it in
            a later invocation (dbt build --exclude {{ model.name }}, then dbt build --select
            {{ model.name }}), or set publish: 'direct' on what it reads.
        {%- endset -%}
        {%- do problems.append(problem) -%}
    {%- endif -%}
    {%- do idempotent_merge_raise('nothing was written, because', problems) -%}
    {%- if upstream -%}
        {#- staged with what it read (the hook that publishes that publishes it too); its own tests audit it only when they would have staged it on their own -#}
        {%- do plan.update({'staged': true, 'audited': false}) -%}
    {%- endif -%}
    {%- if publish != 'audited' -%}
        {{ return(plan) }}
    {%- endif -%}
    {%- set tests = [] -%}
    {%- set test_names = {} -%}
    {%- for node in graph.nodes.values() if lakehouse_audit_tests(node, model.unique_id) -%}
        {%- do tests.append(node.unique_id) -%}
        {%- do test_names.update({node.unique_id: node.name}) -%}
    {%- endfor -%}
    {%- set selected = tests | select('in', selected_resources) | list -%}
    {%- if flags.WHICH == 'build' and selected and selected | length < tests | length -%}
        {%- set problem -%}
            publish is 'audited', and this build selects only some of the model's data tests
            (left out: {% for t in tests | reject('in', selected) %}{{ test_names[t] }}{{ ', ' if not loop.last }}{% endfor %}): its change
            would be published without them. Select the model with all its tests (dbt build
            --select {{ model.name }}), or set publish: 'direct'.
        {%- endset -%}
        {%- do idempotent_merge_raise('nothing was written, because', [problem]) -%}
    {%- endif -%}
    {%- if not tests -%}
        {%- do plan.update({'why': 'it has no data tests to audit it'}) -%}
    {%- elif flags.WHICH != 'build' or not selected -%}
        {%- do plan.update({'why': 'no data test of it runs in this ' ~ flags.WHICH}) -%}
    {%- elif rebuild -%}
        {%- do plan.update({'why': '--full-refresh replaces the whole table'}) -%}
    {%- elif upstream -%}
        {%- do plan.update({'audited': true}) -%}
    {%- else -%}
        {%- set hooks = [] -%}
        {%- for node in graph.nodes.values() if node.resource_type == 'operation' and 'lakehouse_publish_audited' in (node.raw_code or '') -%}
            {%- do hooks.append(node.unique_id) -%}
        {%- endfor -%}
        {%- if not hooks -%}
            {%- set problem -%}
                publish is 'audited', but the project's on-run-end does not call
                lakehouse_publish_audited, so nothing would publish the change once its tests
                pass. Add to dbt_project.yml: on-run-end: ["{{ '{{' }} lakehouse_publish_audited(results) {{ '}}' }}"]
            {%- endset -%}
            {%- do idempotent_merge_raise('nothing was written, because', [problem]) -%}
        {%- endif -%}
        {%- do plan.update({'staged': true}) -%}
    {%- endif -%}
    {%- if not plan.staged -%}
        {#- publishing directly: nothing of it waits for an audit -#}
        {%- do plan.update({'audited': false}) -%}
    {%- endif -%}
    {{ return(plan) }}
{% endmacro %}
