{#-
    Write-audit-publish, the publishing side: lakehouse_publish_audited runs in on-run-end and
    publishes each model idempotent_merge staged in this invocation (publish: 'audited') whose
    data tests all passed. Its private helpers by stage: the verdict from dbt's results, the
    check that the table did not move, and the publish.
-#}

{% macro lakehouse_publish_audited(results) %}
    {#-
        on-run-end: ["{{ lakehouse_publish_audited(results) }}"]
        For each model staged for audit in this invocation, in the order they ran: publish it
        when the model succeeded, every data test on it ran and passed (or warned), and no
        staged model it reads was held back; otherwise leave its published table as it was
        (same version or snapshot, same rows, no ledger entry). Publishing is one commit per
        model: Iceberg fast-forwards main to the model's branch, Delta runs the kept MERGE of
        the change set computed at staging (with its ledger entry); a first load's table was
        created empty, its rows are staged as any change. When the table changed since the
        change was staged (another writer committed: a parallel run of another interval, a
        compaction), the audited state is not what would be published: a model no other stage
        of this build read is staged again on the table as it now is, from the same pinned
        rows, and its data tests run again on that stage (lakehouse_publish_current), up to
        adapter.merge_attempts() times, as the strategy plans again after a commit conflict;
        it is published only if they pass. A model another stage read (that stage's rows came
        from this one's first stage) is refused instead: nothing is published, and once every
        model is handled the hook fails with one error naming each such model and the fix (run
        the interval again). A held-back model's
        Iceberg branch is dropped and its snapshots expired (lakehouse_discard_audit_branch),
        so no reader of `<table>.snapshots` finds its rows; a Delta stage is views. A model not published becomes an error
        in dbt's results (its message says why), and so do its tests that passed on the
        unpublished change, so the summary, run_results.json and the exit status show it and
        `dbt retry` runs the model again with all its tests. Renders no SQL of its own.
    -#}
    {%- if not execute -%}
        {{ return('') }}
    {%- endif -%}
    {%- set stages = adapter.audited_stages() -%}
    {%- set read = [] -%}
    {%- for stage in stages -%}
        {%- do read.extend(stage.reads) -%}
    {%- endfor -%}
    {%- set held = [] -%}
    {%- set refused = [] -%}
    {%- set publishable = [] -%}
    {%- set published = [] -%}
    {%- for stage in stages -%}
        {#- from here on the model's relation renders as the published table again -#}
        {%- do adapter.end_audited(stage.schema, stage.identifier) -%}
        {%- set why = lakehouse_audit_verdict(stage, results, held) -%}
        {%- if why is none and stage.model in read -%}
            {#- another stage's rows came from this stage: it cannot be staged again -#}
            {%- set why = lakehouse_publish_check(stage) -%}
            {%- if why is not none -%}
                {%- do refused.append(stage.published ~ ' (' ~ stage.model ~ '): ' ~ why) -%}
            {%- endif -%}
        {%- endif -%}
        {%- if why is none -%}
            {%- do publishable.append(stage) -%}
        {%- else -%}
            {%- do held.append(stage.model) -%}
            {%- do lakehouse_hold_back(stage, results, why) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for stage in publishable -%}
        {%- set upstream = stage.reads | select('in', held) | list -%}
        {%- if upstream -%}
            {%- set current = {'why': 'it read ' ~ (upstream | join(', ')) ~ ', which was not published', 'refused': false} -%}
        {%- elif stage.model in read -%}
            {#- another stage's rows came from this stage: published as audited, or not at all -#}
            {%- set met = lakehouse_publish_stage(stage) -%}
            {%- set current = {'why': 'its publish met a commit of another writer (' ~ met ~ ')' if met else none, 'refused': true, 'note': '', 'unchanged': false} -%}
        {%- else -%}
            {%- set current = lakehouse_publish_current(stage, results) -%}
        {%- endif -%}
        {%- if current.why is not none -%}
            {%- if current.refused -%}
                {%- do refused.append(stage.published ~ ' (' ~ stage.model ~ '): ' ~ current.why) -%}
            {%- endif -%}
            {%- do held.append(stage.model) -%}
            {%- do lakehouse_hold_back(stage, results, current.why) -%}
        {%- elif current.unchanged -%}
            {#- the table as another writer left it already holds the rows of the interval -#}
            {%- do lakehouse_record_interval(stage.published, stage.model, 'unchanged', stage.bounds) -%}
            {{ log('lakehouse_publish_audited: nothing to publish in ' ~ stage.published ~ ': ' ~ current.note, info=True) }}
        {%- else -%}
            {%- do published.append(stage.model) -%}
            {#- the interval ledger, after the publish: Iceberg's main is now the branch's commit, Delta's MERGE made the version after the one staged on -#}
            {%- do lakehouse_record_interval(stage.published, stage.model, stage.load, stage.bounds, stage.version if stage.kind == 'branch' else (stage.base | int) + 1, since=stage.since) -%}
            {{ log('lakehouse_publish_audited: published ' ~ stage.published ~ ': ' ~ stage.message | replace(' (staged for audit)', '') ~ current.note, info=True) }}
        {%- endif -%}
    {%- endfor -%}
    {#- the stages last, once every kept MERGE has run and every stage was audited: the change
        sets, Delta's temporary views, the published Iceberg branches (main is at their commit) -#}
    {%- for stage in stages -%}
        {%- if stage.kind == 'merge' -%}
            {%- do run_query('drop view if exists ' ~ stage.staged) -%}
        {%- elif stage.model in published -%}
            {%- do run_query('alter table ' ~ stage.published ~ ' drop branch if exists ' ~ stage.branch) -%}
        {%- endif -%}
        {%- do run_query('drop view if exists ' ~ stage.changes) -%}
    {%- endfor -%}
    {%- if refused -%}
        {% set msg %}
lakehouse_publish_audited: nothing was published for these models, because their table changed after their change was staged and audited (another run committed to it meanwhile):
{%- for line in refused %}
  - {{ line }}
{%- endfor %}
Run the same interval again: the rerun computes the change against the table as it is now and audits it again.
        {% endset %}
        {{ exceptions.raise_compiler_error(msg) }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}

{% macro lakehouse_audit_verdict(stage, results, held) %}
    {#-
        Why a staged model must not be published, from dbt's results of this invocation, or
        none: the model did not succeed; it is audited (stage.audited) and a data test on it
        (attached to it, or reading it) failed, errored, was skipped or did not run at all; or
        a staged model it read was held back (its rows were built from a change that will not
        be published).
    -#}
    {%- set tests = [] -%}
    {%- set model_ok = [] -%}
    {%- for r in results -%}
        {%- if r.node.unique_id == stage.model and r.status == 'success' -%}
            {%- do model_ok.append(r) -%}
        {%- elif lakehouse_audit_tests(r.node, stage.model) -%}
            {%- do tests.append(r) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if not model_ok -%}
        {{ return('the model did not succeed') }}
    {%- endif -%}
    {%- if stage.audited and not tests -%}
        {{ return('none of its data tests ran') }}
    {%- endif -%}
    {%- set failed = [] -%}
    {%- for r in tests if stage.audited and r.status not in ['pass', 'warn'] -%}
        {%- do failed.append(r.node.name ~ ' ' ~ r.status) -%}
    {%- endfor -%}
    {%- if failed -%}
        {{ return('its data tests did not pass (' ~ (failed | join(', ')) ~ ')') }}
    {%- endif -%}
    {%- set upstream = stage.reads | select('in', held) | list -%}
    {%- if upstream -%}
        {{ return('it read ' ~ (upstream | join(', ')) ~ ', which was not published') }}
    {%- endif -%}
    {{ return(none) }}
{% endmacro %}

{% macro lakehouse_mark_unpublished(stage, results, why) %}
    {#-
        A model held back becomes an error in dbt's results, and so does each of its tests
        that passed on the staged change: `dbt retry` then runs the model and all its tests
        again (it reruns only what did not succeed), never publishing on a partial audit.
    -#}
    {%- for r in results -%}
        {%- if r.node.unique_id == stage.model -%}
            {%- do adapter.mark_unpublished(r, 'not published: ' ~ why) -%}
        {%- elif r.status in ['pass', 'warn'] and lakehouse_audit_tests(r.node, stage.model) -%}
            {%- do adapter.mark_unpublished(r, 'passed, on a change of ' ~ stage.model ~ ' that was not published (' ~ why ~ '): dbt retry runs it again with the model') -%}
        {%- endif -%}
    {%- endfor -%}
{% endmacro %}

{% macro lakehouse_audit_tests(node, model_id) %}
    {#- Whether a node is a data test of the model (attached to it, or reading it): the tests that audit its stage -#}
    {{ return(node.resource_type == 'test' and (node.attached_node == model_id or model_id in node.depends_on.nodes)) }}
{% endmacro %}

{% macro lakehouse_publish_check(stage) %}
    {#-
        Why a stage can no longer be published, or none: the table moved since the change was
        staged on it (another writer committed: Iceberg's main, Delta's version).
    -#}
    {%- set newest = lakehouse_commit_history(stage.published, stage.format, newest_only=true)[0] -%}
    {%- if newest.version != stage.base -%}
        {{ return(('main' if stage.kind == 'branch' else 'it') ~ ' is at ' ~ newest.label ~ ' ' ~ newest.version ~ ', not ' ~ stage.base ~ ', the ' ~ newest.label ~ ' the change was staged on') }}
    {%- endif -%}
    {{ return(none) }}
{% endmacro %}

{% macro lakehouse_hold_back(stage, results, why) %}
    {#- A stage not published: an error in dbt's results (with its tests), its Iceberg branch discarded, one log line -#}
    {%- do lakehouse_mark_unpublished(stage, results, why) -%}
    {%- if stage.kind == 'branch' -%}
        {%- do lakehouse_discard_audit_branch(stage.schema, stage.identifier, stage.branch) -%}
    {%- endif -%}
    {{ log('lakehouse_publish_audited: not published ' ~ stage.published ~ ', which stays as it was: ' ~ why ~ '; the staged change was discarded (dbt build --store-failures keeps the rows a test found)', info=True) }}
{% endmacro %}

{% macro lakehouse_publish_current(stage, results) %}
    {#-
        Publish a stage no other stage read, on the table as it now is: while the table moved
        since the change was staged, or the publish itself met another writer's commit
        (adapter.publish_commit), stage it again on the table as it now is and audit it again
        (lakehouse_audit_again), up to adapter.merge_attempts() times. Returns {'why': none
        once published (or nothing left to publish), else why not; 'refused': true when the
        table kept moving; 'unchanged': true when the table as it now is already holds the
        interval's rows; 'note': what the log line adds}.
    -#}
    {%- set state = {'why': none, 'refused': false, 'unchanged': false, 'note': '', 'done': false} -%}
    {%- set attempts = adapter.merge_attempts() -%}
    {%- for attempt in range(1, attempts + 1) if not state.done -%}
        {%- set moved = lakehouse_publish_check(stage) -%}
        {%- if moved is none -%}
            {%- set met = lakehouse_publish_stage(stage) -%}
            {%- if met -%}
                {%- set moved = 'its publish met a commit of another writer (' ~ met ~ ')' -%}
            {%- else -%}
                {%- do state.update({'done': true}) -%}
            {%- endif -%}
        {%- endif -%}
        {%- if state.done -%}
        {%- elif attempt == attempts -%}
            {%- do state.update({'done': true, 'refused': true, 'why': moved ~ ', on each of ' ~ attempts ~ ' audits'}) -%}
        {%- else -%}
            {{ log('lakehouse_publish_audited: ' ~ stage.published ~ ' moved since its change was staged (' ~ moved ~ '): staging it again on the table as it is now and running its data tests again', info=True) }}
            {%- set again = lakehouse_audit_again(stage, results) -%}
            {%- set note = ' (audited again on ' ~ again.on ~ ' after another writer committed; attempt ' ~ (attempt + 1) ~ ' of ' ~ attempts ~ ')' -%}
            {%- if again.unchanged -%}
                {%- do state.update({'done': true, 'unchanged': true, 'note': 'the table as another writer left it already holds the rows of the interval' ~ note}) -%}
            {%- elif again.failed -%}
                {%- do state.update({'done': true, 'why': 'its data tests did not pass on the table as another writer left it (' ~ (again.failed | join(', ')) ~ ')'}) -%}
            {%- else -%}
                {%- do state.update({'note': note}) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(state) }}
{% endmacro %}

{% macro lakehouse_audit_again(stage, results) %}
    {#-
        Stage the model's change again on the table as it now is, as its run did
        (idempotent_merge_stage, from the pinned rows and the arguments the stage kept: the
        change set planned again, an Iceberg branch of the same name, a Delta view of the same
        name), then run each of its data tests that passed again, as dbt ran it (its compiled
        SQL names the stage; get_test_sql with its fail_calc, warn_if and error_if). Returns
        {'on': the version or snapshot staged on, 'unchanged': nothing left to change,
        'failed': the tests that fail now}; the stage is updated in place.
    -#}
    {%- set args = stage.replan -%}
    {%- if stage.kind == 'branch' -%}
        {%- do lakehouse_discard_audit_branch(stage.schema, stage.identifier, stage.branch) -%}
    {%- endif -%}
    {%- set target = api.Relation.create(schema=stage.schema, identifier=stage.identifier, type='table') -%}
    {%- set staged = idempotent_merge_stage(args.cfg, args.source, target, stage.changes, args.one_row_per_key, stage.format, args.load, stage.branch) -%}
    {%- set on = staged.base.label ~ ' ' ~ staged.base.version -%}
    {%- if staged.stage is none -%}
        {{ return({'on': on, 'unchanged': true, 'failed': []}) }}
    {%- endif -%}
    {%- do stage.update(staged.stage) -%}
    {%- if stage.kind == 'branch' -%}
        {%- do stage.update({'version': lakehouse_commit_history(stage.published, stage.format, newest_only=true, ref=stage.branch)[0].version}) -%}
    {%- endif -%}
    {%- set failed = [] -%}
    {%- for r in results if r.status in ['pass', 'warn'] and lakehouse_audit_tests(r.node, stage.model) -%}
        {%- set c = r.node.config -%}
        {%- set verdict = run_query(get_test_sql(r.node.compiled_code, c.fail_calc, c.warn_if, c.error_if, c.limit)).rows[0] -%}
        {%- if (c.severity | upper) == 'ERROR' and verdict['should_error'] -%}
            {%- do failed.append(r.node.name ~ ' fail') -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return({'on': on, 'unchanged': false, 'failed': failed}) }}
{% endmacro %}

{% macro lakehouse_publish_stage(stage) %}
    {#-
        Publish one stage in one commit: Iceberg fast-forwards main to the branch
        (fast_forward itself refuses when main is no longer the branch's ancestor; the branch
        is dropped at the end of the hook, so a test audited again later that reads this stage
        reads what was published), Delta runs the kept MERGE with its ledger entry. Returns ''
        once committed, or what showed that another writer committed since the stage
        (adapter.publish_commit: nothing was published).
    -#}
    {%- if stage.kind == 'branch' -%}
        {{ return(adapter.publish_commit("call spark_catalog.system.fast_forward('" ~ stage.schema ~ "." ~ stage.identifier ~ "', 'main', '" ~ stage.branch ~ "')")) }}
    {%- endif -%}
    {%- do lakehouse_commit_metadata_set('delta', stage.ledger) -%}
    {%- set met = adapter.publish_commit(stage.merge_sql) -%}
    {%- do lakehouse_commit_metadata_reset('delta') -%}
    {{ return(met) }}
{% endmacro %}
